package regtest

import (
	"encoding/json"
	"fmt"
	"net/url"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/imgctl/imgctl/snapshot"
)

// Names BuildKit uses for attestation manifests in an index.
const (
	// InTotoMediaType is the media type of in-toto attestation layers.
	InTotoMediaType types.MediaType = snapshot.InTotoMediaType
	// AnnotationPredicateType is the layer annotation naming the predicate.
	AnnotationPredicateType = snapshot.AnnotationPredicateType
	// SLSAProvenanceV02 is the predicate type of the provenance layer.
	SLSAProvenanceV02 = "https://slsa.dev/provenance/v0.2"
)

// AttestationPlatform is the descriptor platform of attestation manifests.
var AttestationPlatform = v1.Platform{OS: "unknown", Architecture: "unknown"}

type statement struct {
	Type          string         `json:"_type"`
	PredicateType string         `json:"predicateType"`
	Subject       []subject      `json:"subject"`
	Predicate     map[string]any `json:"predicate"`
}

type subject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

// Attestation returns a BuildKit-style attestation manifest for subject: an
// OCI manifest whose config says os and architecture "unknown" and whose one
// layer is an in-toto SLSA provenance statement about subject.
func Attestation(subj v1.Descriptor) (v1.Image, error) {
	name := "pkg:docker/imgctl/hello@latest"
	if subj.Platform != nil {
		name += "?platform=" + url.QueryEscape(subj.Platform.String())
	}
	b, err := json.Marshal(statement{
		Type:          "https://in-toto.io/Statement/v0.1",
		PredicateType: SLSAProvenanceV02,
		Subject:       []subject{{Name: name, Digest: map[string]string{subj.Digest.Algorithm: subj.Digest.Hex}}},
		Predicate: map[string]any{
			"builder":   map[string]string{"id": ""},
			"buildType": "https://mobyproject.org/buildkit@v1",
			"metadata":  map[string]any{"buildFinishedOn": FixtureTime.Format("2006-01-02T15:04:05Z")},
		},
	})
	if err != nil {
		return nil, err
	}
	return attestationImage(statementLayer{body: b, predicateType: SLSAProvenanceV02})
}

// AttestationEntry returns the index Entry of the attestation manifest for
// img: platform unknown/unknown and the vnd.docker.reference annotations
// pointing at img's digest.
func AttestationEntry(img v1.Image) (Entry, error) {
	desc, err := partial.Descriptor(img)
	if err != nil {
		return Entry{}, fmt.Errorf("describing subject: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return Entry{}, fmt.Errorf("reading subject config: %w", err)
	}
	desc.Platform = cf.Platform()
	att, err := Attestation(*desc)
	if err != nil {
		return Entry{}, err
	}
	p := AttestationPlatform
	return Entry{
		Image:    att,
		Platform: &p,
		Annotations: map[string]string{
			snapshot.AnnotationReferenceType:   snapshot.AttestationManifest,
			snapshot.AnnotationReferenceDigest: desc.Digest.String(),
		},
	}, nil
}
