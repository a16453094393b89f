package build

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/imgctl/imgctl/platform"
)

// Metadata is what --metadata-file writes for CI.
type Metadata struct {
	// Index is the pushed index.
	Index MetadataIndex `json:"index"`
	// Platforms are the images of the index, in index order.
	Platforms []MetadataPlatform `json:"platforms"`
}

// MetadataIndex names the pushed index.
type MetadataIndex struct {
	// Ref is the (first) tag.
	Ref string `json:"ref"`
	// Tags are every tag pushed, Ref first.
	Tags []string `json:"tags"`
	// Digest is the index digest.
	Digest string `json:"digest"`
}

// MetadataPlatform is one image of the index.
type MetadataPlatform struct {
	// Platform is os/arch[/variant], without os.version.
	Platform string `json:"platform"`
	// Digest is the image manifest's digest.
	Digest string `json:"digest"`
	// OSVersion is the index descriptor's os.version (Windows).
	OSVersion string `json:"os.version,omitempty"`
	// Base is the final stage's base; nil for FROM scratch.
	Base *MetadataBase `json:"base,omitempty"`
}

// MetadataBase is the base image of the final stage.
type MetadataBase struct {
	// Name is the fully qualified base reference.
	Name string `json:"name"`
	// Digest is the digest the base was pinned to, as the base.digest
	// annotation records it: the index or image the reference pointed at,
	// or the index child chosen for a Windows build (see ResolvedBase).
	Digest string `json:"digest"`
}

// Metadata returns the result in the --metadata-file form.
func (r *Result) Metadata() Metadata {
	m := Metadata{Index: MetadataIndex{Ref: r.Index.Tag.String(), Digest: r.Index.Digest.String()}, Platforms: []MetadataPlatform{}}
	for _, t := range r.Index.Tags {
		m.Index.Tags = append(m.Index.Tags, t.String())
	}
	if len(m.Index.Tags) == 0 {
		m.Index.Tags = []string{m.Index.Ref}
	}
	for _, p := range r.Platforms {
		plat := p.Platform
		plat.OSVersion = ""
		mp := MetadataPlatform{Platform: platform.Format(plat), Digest: p.Digest.String(), OSVersion: p.Platform.OSVersion}
		if p.Base != nil {
			mp.Base = &MetadataBase{Name: p.Base.Name, Digest: p.Base.Digest.String()}
		}
		m.Platforms = append(m.Platforms, mp)
	}
	return m
}

// WriteMetadata writes the metadata as indented JSON to path: one build's,
// or several keyed by name (imgctl bake's targets, as buildx bake keys its
// metadata file).
func WriteMetadata[M Metadata | map[string]Metadata](path string, m M) error {
	dt, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding metadata: %w", err)
	}
	if err := os.WriteFile(path, append(dt, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing metadata: %w", err)
	}
	return nil
}
