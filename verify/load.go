package verify

import (
	"context"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sync/errgroup"

	"github.com/imgctl/imgctl/platform"
)

// Annotations BuildKit puts on attestation manifest descriptors.
const (
	AnnotationReferenceType   = "vnd.docker.reference.type"
	AnnotationReferenceDigest = "vnd.docker.reference.digest"
	AttestationManifest       = "attestation-manifest"
)

// Entry is one child of an index with what verify read of it.
type Entry struct {
	Descriptor v1.Descriptor
	// Manifest and Config are nil for attestations and nested indexes,
	// which verify does not open.
	Manifest *v1.Manifest
	Config   *v1.ConfigFile
}

// IsAttestation reports whether the entry is a BuildKit attestation
// manifest.
func (e Entry) IsAttestation() bool {
	return e.Descriptor.Annotations[AnnotationReferenceType] == AttestationManifest ||
		platform.IsAttestation(e.Descriptor.Platform)
}

// ConfigPlatform returns the platform the image config declares, or nil.
func (e Entry) ConfigPlatform() *platform.Platform {
	if e.Config == nil {
		return nil
	}
	p := e.Config.Platform()
	return p
}

// Snapshot is everything verify reads of a reference.
type Snapshot struct {
	Digest v1.Hash
	// Index is nil when the reference is a single manifest.
	Index   *v1.IndexManifest
	Entries []Entry
}

// DefaultConcurrency bounds concurrent manifest and config fetches.
const DefaultConcurrency = 8

// LoadIndex reads an index, its child manifests and their configs, at most
// concurrency at a time. Attestation manifests and nested indexes are not
// opened. It never reads a layer.
func LoadIndex(ctx context.Context, idx v1.ImageIndex, concurrency int) (*Snapshot, error) {
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("reading index: %w", err)
	}
	d, err := idx.Digest()
	if err != nil {
		return nil, fmt.Errorf("reading index digest: %w", err)
	}
	s := &Snapshot{Digest: d, Index: im, Entries: make([]Entry, len(im.Manifests))}
	if concurrency <= 0 {
		concurrency = DefaultConcurrency
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(concurrency)
	for i, desc := range im.Manifests {
		s.Entries[i].Descriptor = desc
		if !desc.MediaType.IsImage() || s.Entries[i].IsAttestation() {
			continue
		}
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			img, err := idx.Image(desc.Digest)
			if err != nil {
				return fmt.Errorf("opening manifest %s: %w", desc.Digest, err)
			}
			e, err := readImage(img)
			if err != nil {
				return fmt.Errorf("manifest %s: %w", desc.Digest, err)
			}
			s.Entries[i].Manifest, s.Entries[i].Config = e.Manifest, e.Config
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return s, nil
}

// LoadImage reads a single-platform manifest and its config.
func LoadImage(img v1.Image) (*Snapshot, error) {
	e, err := readImage(img)
	if err != nil {
		return nil, err
	}
	d, err := img.Digest()
	if err != nil {
		return nil, fmt.Errorf("reading digest: %w", err)
	}
	mt, err := img.MediaType()
	if err != nil {
		return nil, fmt.Errorf("reading media type: %w", err)
	}
	sz, err := img.Size()
	if err != nil {
		return nil, fmt.Errorf("reading size: %w", err)
	}
	e.Descriptor = v1.Descriptor{MediaType: mt, Digest: d, Size: sz}
	return &Snapshot{Digest: d, Entries: []Entry{e}}, nil
}

func readImage(img v1.Image) (Entry, error) {
	m, err := img.Manifest()
	if err != nil {
		return Entry{}, fmt.Errorf("reading manifest: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return Entry{}, fmt.Errorf("reading config %s: %w", m.Config.Digest, err)
	}
	return Entry{Manifest: m, Config: cf}, nil
}
