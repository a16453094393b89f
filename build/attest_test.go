package build

import (
	"errors"
	"maps"
	"testing"

	"github.com/moby/buildkit/frontend/attestations"
)

// TestAttestAttrsParseAsBuildKit reads the frontend attributes back with
// BuildKit's own parser (what the daemon and the Dockerfile frontend run).
func TestAttestAttrsParseAsBuildKit(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		want map[string]map[string]string
	}{
		{"none", Options{}, map[string]map[string]string{}},
		{"min", Options{Provenance: &Provenance{Mode: ProvenanceMin}},
			map[string]map[string]string{"provenance": {"mode": "min", "version": "v1"}}},
		{"max with builder id holding a comma", Options{Provenance: &Provenance{Mode: ProvenanceMax, BuilderID: `https://ci.example.com/run?a=1,b="2"`}},
			map[string]map[string]string{"provenance": {"mode": "max", "version": "v1", "builder-id": `https://ci.example.com/run?a=1,b="2"`}}},
		{"default scanner", Options{SBOM: &SBOM{}},
			map[string]map[string]string{"sbom": {"generator": "docker/buildkit-syft-scanner:stable-1"}}},
		{"own scanner and provenance", Options{Provenance: &Provenance{Mode: ProvenanceMin}, SBOM: &SBOM{Generator: "127.0.0.1:5000/scanner@sha256:0123"}},
			map[string]map[string]string{"provenance": {"mode": "min", "version": "v1"}, "sbom": {"generator": "127.0.0.1:5000/scanner@sha256:0123"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := attestations.Parse(attestAttrs(&tc.o))
			if err != nil {
				t.Fatal(err)
			}
			if !maps.EqualFunc(got, tc.want, maps.Equal) {
				t.Errorf("parsed %v, want %v", got, tc.want)
			}
		})
	}
}

func TestValidateAttestations(t *testing.T) {
	for _, mode := range []string{ProvenanceMin, ProvenanceMax} {
		if err := validateAttestations(&Options{Provenance: &Provenance{Mode: mode}}); err != nil {
			t.Errorf("%s: %v", mode, err)
		}
	}
	for _, mode := range []string{"", "full", "MIN"} {
		if err := validateAttestations(&Options{Provenance: &Provenance{Mode: mode}}); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%q: %v, want ErrInvalidOptions", mode, err)
		}
	}
	if !(&Options{SBOM: &SBOM{}}).NeedsBaseFiles() || (&Options{Provenance: &Provenance{Mode: ProvenanceMax}}).NeedsBaseFiles() {
		t.Error("NeedsBaseFiles: want true exactly with an SBOM")
	}
}
