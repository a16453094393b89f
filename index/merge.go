package index

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Plan is an index ready to publish.
type Plan struct {
	// Manifest is the index; Raw its exact bytes, Digest their digest.
	Manifest *v1.IndexManifest
	Raw      []byte
	Digest   v1.Hash
	// Entries are the children in index order.
	Entries []*Entry
	// Notes say what the merge dropped or filled in.
	Notes []string
}

// merge resolves duplicates, keeps the attestations of kept images, orders
// the entries and serialises the index. It reads configs only to break
// PreferNewest ties.
func (s *session) merge(entries []*Entry, annotations map[string]string) (*Plan, error) {
	var images, atts []*Entry
	for _, e := range entries {
		if e.IsAttestation() {
			atts = append(atts, e)
		} else {
			images = append(images, e)
		}
	}
	images, err := s.dedupe(images)
	if err != nil {
		return nil, err
	}
	sortImages(images)
	atts = s.keepAttestations(atts, images)
	sortAttestations(atts, images)
	all := slices.Concat(images, atts)
	if len(all) == 0 {
		return nil, ErrNoSources
	}
	im := &v1.IndexManifest{SchemaVersion: 2, Annotations: maps.Clone(annotations)}
	for _, e := range all {
		im.Manifests = append(im.Manifests, e.Descriptor)
	}
	im.MediaType = indexMediaType(im)
	raw, err := json.Marshal(im)
	if err != nil {
		return nil, fmt.Errorf("encoding index: %w", err)
	}
	d, _, err := v1.SHA256(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("hashing index: %w", err)
	}
	return &Plan{Manifest: im, Raw: raw, Digest: d, Entries: all, Notes: s.takeNotes()}, nil
}

// keepAttestations keeps each attestation once if its subject is kept.
func (s *session) keepAttestations(atts, images []*Entry) []*Entry {
	if s.o.NoAttestations {
		if len(atts) > 0 {
			s.note("dropped %d attestation manifest(s) (no attestations asked)", len(atts))
		}
		return nil
	}
	kept := map[v1.Hash]bool{}
	for _, e := range images {
		kept[e.Descriptor.Digest] = true
	}
	seen := map[v1.Hash]bool{}
	var out []*Entry
	for _, a := range atts {
		if seen[a.Descriptor.Digest] {
			continue
		}
		seen[a.Descriptor.Digest] = true
		subj, ok := a.Subject()
		switch {
		case !ok:
			s.note("dropped %s: it names no subject", a)
		case !kept[subj]:
			s.note("dropped %s: its subject %s is not in the index", a, subj)
		default:
			out = append(out, a)
		}
	}
	return out
}

// indexMediaType is a Docker manifest list when every child is a Docker
// schema2 manifest or list and nothing carries annotations (Docker lists
// have none); an OCI index otherwise.
func indexMediaType(im *v1.IndexManifest) types.MediaType {
	if len(im.Annotations) > 0 || len(im.Manifests) == 0 {
		return types.OCIImageIndex
	}
	for _, d := range im.Manifests {
		if len(d.Annotations) > 0 || (d.MediaType != types.DockerManifestSchema2 && d.MediaType != types.DockerManifestList) {
			return types.OCIImageIndex
		}
	}
	return types.DockerManifestList
}
