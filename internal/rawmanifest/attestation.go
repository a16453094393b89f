package rawmanifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// uncompressedAnnotation is containerd's record of a blob's uncompressed
// digest, which BuildKit puts on each statement of an attestation.
const uncompressedAnnotation = "containerd.io/uncompressed"

// emptyJSON is the config media type of an OCI artifact.
const emptyJSON = types.MediaType("application/vnd.oci.empty.v1+json")

// Attestation is an attestation manifest edited by RewriteAttestation.
type Attestation struct {
	// Manifest and Config are the exact bytes of the new manifest and
	// config; Config is nil when the manifest's config is the empty JSON
	// of an OCI artifact, which stays.
	Manifest, Config []byte
	// ConfigDescriptor and Layers are the new manifest's descriptors, for
	// the caller's uploads.
	ConfigDescriptor v1.Descriptor
	Layers           []v1.Descriptor
}

// RewriteAttestation points an attestation manifest (BuildKit's layout, or
// an OCI artifact with a subject) at new statements, one per layer in
// order, and at subject, the image it now attests: each layer descriptor
// gets its statement's digest and size (and containerd's uncompressed
// annotation, where present, that digest too); BuildKit's config, which
// lists the statements' digests as its diff_ids
// (exporter/containerimage/writer.go, attestationsConfig), gets them; an
// artifact's subject names subject. Every other byte stays (see the
// package documentation). The statements themselves are the caller's: it
// rewrites what they say about the image.
func RewriteAttestation(manifest, config []byte, statements [][]byte, subject v1.Descriptor) (*Attestation, error) {
	var m v1.Manifest
	if err := json.Unmarshal(manifest, &m); err != nil {
		return nil, fmt.Errorf("reading attestation manifest: %w", err)
	}
	if len(statements) != len(m.Layers) {
		return nil, fmt.Errorf("attestation manifest with %d layers, %d statements given", len(m.Layers), len(statements))
	}
	out := &Attestation{Layers: make([]v1.Descriptor, len(m.Layers))}
	ids := make([]v1.Hash, len(m.Layers))
	for i, l := range m.Layers {
		h, size, err := v1.SHA256(bytes.NewReader(statements[i]))
		if err != nil {
			return nil, err
		}
		l.Digest, l.Size, l.Data = h, size, nil
		if _, ok := l.Annotations[uncompressedAnnotation]; ok {
			l.Annotations = maps.Clone(l.Annotations)
			l.Annotations[uncompressedAnnotation] = h.String()
		}
		out.Layers[i], ids[i] = l, h
	}
	out.ConfigDescriptor = m.Config
	if m.Config.MediaType != emptyJSON {
		c, err := WithDiffIDs(config, ids)
		if err != nil {
			return nil, err
		}
		h, size, err := v1.SHA256(bytes.NewReader(c))
		if err != nil {
			return nil, err
		}
		out.Config = c
		out.ConfigDescriptor.Digest, out.ConfigDescriptor.Size, out.ConfigDescriptor.Data = h, size, nil
	}
	edits := map[string]any{"config": out.ConfigDescriptor, "layers": out.Layers}
	if m.Subject != nil {
		edits["subject"] = v1.Descriptor{MediaType: m.Subject.MediaType, Digest: subject.Digest, Size: subject.Size}
	}
	var err error
	if out.Manifest, err = Set(manifest, edits); err != nil {
		return nil, err
	}
	return out, nil
}
