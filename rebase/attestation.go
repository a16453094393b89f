package rebase

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	godigest "github.com/opencontainers/go-digest"
	specsgo "github.com/opencontainers/image-spec/specs-go"
	specs "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/imgctl/imgctl/index"
	"github.com/imgctl/imgctl/snapshot"
)

// attestationManifest returns the attestation manifest holding stmt, a
// provenance statement about subject, as an index child in BuildKit's
// layout (exporter/containerimage's commitAttestationsManifest with OCI
// media types, its default): an OCI image manifest whose config says
// os and architecture "unknown" with the statement's digest as its one
// diff_id, and one application/vnd.in-toto+json layer annotated with the
// predicate type; the index descriptor has platform unknown/unknown and
// the vnd.docker.reference annotations naming subject. BuildKit's writer
// needs a content store and a solve, so the same layout is built here from
// the OCI types.
func attestationManifest(stmt []byte, subject v1.Descriptor) (index.Prepared, error) {
	layer := specs.Descriptor{
		MediaType:   snapshot.InTotoMediaType,
		Digest:      godigest.FromBytes(stmt),
		Size:        int64(len(stmt)),
		Annotations: map[string]string{snapshot.AnnotationPredicateType: snapshot.PredicateSLSAProvenanceV1},
	}
	unknown := specs.Platform{OS: "unknown", Architecture: "unknown"}
	cfg, err := json.Marshal(specs.Image{Platform: unknown, RootFS: specs.RootFS{Type: "layers", DiffIDs: []godigest.Digest{layer.Digest}}})
	if err != nil {
		return index.Prepared{}, err
	}
	cfgDesc := specs.Descriptor{MediaType: specs.MediaTypeImageConfig, Digest: godigest.FromBytes(cfg), Size: int64(len(cfg))}
	raw, err := json.MarshalIndent(specs.Manifest{
		Versioned: specsgo.Versioned{SchemaVersion: 2},
		MediaType: specs.MediaTypeImageManifest,
		Config:    cfgDesc,
		Layers:    []specs.Descriptor{layer},
	}, "", "  ")
	if err != nil {
		return index.Prepared{}, err
	}
	d, size, err := v1.SHA256(bytes.NewReader(raw))
	if err != nil {
		return index.Prepared{}, err
	}
	desc := v1.Descriptor{
		MediaType: specs.MediaTypeImageManifest,
		Digest:    d,
		Size:      size,
		Platform:  &v1.Platform{OS: unknown.OS, Architecture: unknown.Architecture},
		Annotations: map[string]string{
			snapshot.AnnotationReferenceType:   snapshot.AttestationManifest,
			snapshot.AnnotationReferenceDigest: subject.Digest.String(),
		},
	}
	blob := func(sd specs.Descriptor, data []byte) index.Blob {
		h := v1.Hash{Algorithm: sd.Digest.Algorithm().String(), Hex: sd.Digest.Encoded()}
		return index.Blob{Descriptor: v1.Descriptor{MediaType: types.MediaType(sd.MediaType), Digest: h, Size: sd.Size}, Data: data}
	}
	return index.Prepared{Descriptor: desc, Manifest: raw, Blobs: []index.Blob{blob(cfgDesc, cfg), blob(layer, stmt)}}, nil
}

// provenance writes, for each rebased variant, an attestation manifest
// with imgctl's provenance, which lists the variant's old attestation
// manifests, and says in res.Notes what became of the old ones. An old
// SBOM is not carried over: it lists the old base's files and packages,
// and rebase reads no layer to list the new base's.
func (s *session) provenance(ctx context.Context, r *run, res *Result) ([]index.Prepared, error) {
	var atts []index.Prepared
	r.invocation = r.invocationID()
	for _, v := range r.src.variants {
		if v.NewDigest == "" {
			continue
		}
		olds, err := s.oldAttestations(ctx, r.src, v)
		if err != nil {
			return nil, err
		}
		stmt, err := r.statement(&s.o, v, v.newDesc, olds)
		if err != nil {
			return nil, err
		}
		att, err := attestationManifest(stmt, v.newDesc)
		if err != nil {
			return nil, fmt.Errorf("variant %s: %w", v.Platform, err)
		}
		att.From = r.src.ref
		atts = append(atts, att)
		for _, a := range olds {
			res.Notes = append(res.Notes, fmt.Sprintf("%s: attestation %s (%s) describes the image before the rebase: "+
				"the new provenance %s lists it as a resolved dependency; it stays in %s as long as a tag there points at %s",
				v.Platform, a.desc.Digest, describeTypes(a.types), att.Descriptor.Digest, r.src.ref.Context(), r.src.digest))
			if slices.Contains(a.types, snapshot.PredicateSPDX) {
				res.Notes = append(res.Notes, fmt.Sprintf("%s: its SBOM is not carried over: it lists the old base's packages, "+
					"and rebase reads no layer to list the new base's (rebuild with an SBOM for a current one)", v.Platform))
			}
		}
	}
	return atts, nil
}

// describeTypes names predicate types for notes.
func describeTypes(types []string) string {
	var names []string
	for _, t := range types {
		switch {
		case t == snapshot.PredicateSPDX:
			names = append(names, "SBOM")
		case strings.HasPrefix(t, snapshot.PredicateSLSAProvenancePrefix):
			names = append(names, "provenance")
		default:
			names = append(names, t)
		}
	}
	if len(names) == 0 {
		return "no statements"
	}
	return strings.Join(names, ", ")
}

// oldAttestations reads the attestation manifests of variant v in the
// source index: the predicate types of their layers say what the rebase
// leaves behind (BuildKit's provenance, an SBOM).
func (s *session) oldAttestations(ctx context.Context, in *source, v *variant) ([]oldAttestation, error) {
	var out []oldAttestation
	for _, d := range in.others {
		if !snapshot.IsAttestation(d) || d.Annotations[snapshot.AnnotationReferenceDigest] != v.Digest {
			continue
		}
		img, err := s.image(ctx, in.ref.Context(), d.Digest)
		if err != nil {
			return nil, fmt.Errorf("variant %s: attestation %s: %w", v.Platform, d.Digest, err)
		}
		a := oldAttestation{desc: d}
		for _, l := range img.manifest.Layers {
			if t := l.Annotations[snapshot.AnnotationPredicateType]; t != "" && !slices.Contains(a.types, t) {
				a.types = append(a.types, t)
			}
		}
		out = append(out, a)
	}
	return out, nil
}
