package verify

import (
	"fmt"
	"slices"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/findings"
	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/snapshot"
)

func mustPatterns(t *testing.T, ss ...string) []PlatformPattern {
	t.Helper()
	var out []PlatformPattern
	for _, s := range ss {
		p, err := ParsePlatformPattern(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

func TestPlatformPattern(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		match   []string
		miss    []string
	}{
		{"*", []string{"linux/amd64", "windows/amd64:10.0.26100.1"}, nil},
		{"windows/*", []string{"windows/amd64:10.0.20348.1", "windows/arm64"}, []string{"linux/amd64"}},
		{"*/arm64", []string{"linux/arm64/v8", "windows/arm64"}, []string{"linux/amd64"}},
		{"linux/arm64", []string{"linux/arm64/v8", "linux/arm64"}, []string{"linux/arm/v7", "windows/arm64"}},
		{"windows/amd64:10.0.26100", []string{"windows/amd64:10.0.26100.6584"}, []string{"windows/amd64:10.0.20348.4297"}},
	} {
		p := mustPatterns(t, tc.pattern)[0]
		for _, s := range append(slices.Clone(tc.match), tc.miss...) {
			pl, err := platform.Parse(s)
			if err != nil {
				t.Fatal(err)
			}
			if want := slices.Contains(tc.match, s); p.Match(pl) != want {
				t.Errorf("%s matches %s: %v, want %v", tc.pattern, s, !want, want)
			}
		}
	}
	for _, bad := range []string{"", "windows", "win*/amd64", "*/*/v8", "windows/*:10.0.26100", "linux/amd64/v8/x"} {
		if _, err := ParsePlatformPattern(bad); err == nil {
			t.Errorf("pattern %q accepted", bad)
		}
	}
}

func TestMatchGlob(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"https://github.com/docker/buildx", "https://github.com/docker/buildx", true},
		{"https://github.com/docker/buildx", "https://github.com/docker/buildx/x", false},
		{"https://github.com/docker/buildx*", "https://github.com/docker/buildx/actions/runs/1", true},
		{"https://github.com/*/rebase/v1", "https://github.com/imgctl/imgctl/rebase/v1", true},
		{"https://github.com/*/rebase/v1", "https://github.com/imgctl/imgctl/rebase/v2", false},
		{"https://mobyproject.org/buildkit@v1", "https://mobyproject.org/buildkit@v1x", false},
		{"a.b*", "aXb", false}, // "." is not special
		{"*", "", true},
	} {
		if got := MatchGlob(tc.pattern, tc.s); got != tc.want {
			t.Errorf("MatchGlob(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}

// TestEvaluateAttestations: each covered image needs its own provenance
// (v0.2 or v1) from a trusted builder and an SBOM; images of platforms no
// requirement covers need nothing.
func TestEvaluateAttestations(t *testing.T) {
	s := testSnapshot("linux/amd64", "windows/amd64:10.0.26100.6584")
	ld, wd := s.Entries[0].Descriptor.Digest, s.Entries[1].Descriptor.Digest
	other := v1.Hash{Algorithm: "sha256", Hex: fmt.Sprintf("%064d", 99)}
	const buildkit02, buildkit1 = "https://mobyproject.org/buildkit@v1", "https://github.com/moby/buildkit/blob/master/docs/attestations/slsa-definitions.md"
	prov := func(pt, id, bt string, about v1.Hash) snapshot.Statement {
		return snapshot.Statement{PredicateType: pt, Read: true, Subjects: []v1.Hash{about}, BuilderID: id, BuildType: bt}
	}
	v02 := func(about v1.Hash) snapshot.Statement {
		return prov(snapshot.PredicateSLSAProvenanceV02, "", buildkit02, about)
	}
	v1p := func(about v1.Hash) snapshot.Statement {
		return prov(snapshot.PredicateSLSAProvenanceV1, "https://github.com/imgctl/imgctl", "https://github.com/imgctl/imgctl/rebase/v1", about)
	}
	sbom := snapshot.Statement{PredicateType: snapshot.PredicateSPDX}
	att := func(subject v1.Hash, st ...snapshot.Statement) snapshot.Attestation {
		return snapshot.Attestation{Subject: subject, Statements: st}
	}
	trusted := []Builder{{BuildType: buildkit02}, {ID: "https://github.com/imgctl/*", BuildType: "https://github.com/imgctl/imgctl/rebase/v1"}}
	all := func(b []Builder, sb bool) []AttestationRequirement {
		return []AttestationRequirement{{Platforms: mustPatterns(t, "*"), Provenance: true, Builders: b, SBOM: sb}}
	}
	type want struct {
		rule   string
		digest v1.Hash
	}
	for _, tc := range []struct {
		name string
		atts []snapshot.Attestation
		reqs []AttestationRequirement
		want []want
	}{
		{"v0.2 and v1 from trusted builders, with SBOMs", []snapshot.Attestation{att(ld, v02(ld), sbom), att(wd, v1p(wd), sbom)}, all(trusted, true), nil},
		{"no attestations", nil, all(trusted, true), []want{
			{RuleMissingProvenance, ld}, {RuleMissingSBOM, ld}, {RuleMissingProvenance, wd}, {RuleMissingSBOM, wd}}},
		{"no SBOM", []snapshot.Attestation{att(ld, v02(ld)), att(wd, v1p(wd))}, all(nil, true), []want{{RuleMissingSBOM, ld}, {RuleMissingSBOM, wd}}},
		{"builder id mismatch", []snapshot.Attestation{att(ld, v02(ld)), att(wd, prov(snapshot.PredicateSLSAProvenanceV1, "https://evil.example/builder", "https://github.com/imgctl/imgctl/rebase/v1", wd))},
			all(trusted, false), []want{{RuleUntrustedBuilder, wd}}},
		{"build type mismatch (v1 BuildKit type, only v0.2 trusted)", []snapshot.Attestation{att(ld, prov(snapshot.PredicateSLSAProvenanceV1, "", buildkit1, ld)), att(wd, v1p(wd))},
			all(trusted, false), []want{{RuleUntrustedBuilder, ld}}},
		{"one trusted provenance among others suffices", []snapshot.Attestation{att(ld, prov(snapshot.PredicateSLSAProvenanceV1, "x", "y", ld), v02(ld)), att(wd, v1p(wd))}, all(trusted, false), nil},
		{"any builder", []snapshot.Attestation{att(ld, prov(snapshot.PredicateSLSAProvenanceV1, "x", "y", ld)), att(wd, v1p(wd))}, all(nil, false), nil},
		{"provenance of another digest", []snapshot.Attestation{att(ld, v02(other)), att(wd, v1p(wd))}, all(nil, false), []want{{RuleMissingProvenance, ld}}},
		{"provenance without subjects counts for its image", []snapshot.Attestation{att(ld, snapshot.Statement{PredicateType: snapshot.PredicateSLSAProvenanceV02, Read: true, BuildType: buildkit02}), att(wd, v1p(wd))},
			all(trusted, false), nil},
		{"attached to another image", []snapshot.Attestation{att(wd, v02(ld)), att(wd, v1p(wd))}, all(nil, false), []want{{RuleMissingProvenance, ld}}},
		{"attestation manifest absent", []snapshot.Attestation{{Subject: ld, Absent: true}, att(wd, v1p(wd))}, all(nil, false), []want{{RuleMissingProvenance, ld}}},
		{"only Windows covered", nil, []AttestationRequirement{{Platforms: mustPatterns(t, "windows/*"), SBOM: true}}, []want{{RuleMissingSBOM, wd}}},
		{"only linux/amd64 covered", nil, []AttestationRequirement{{Platforms: mustPatterns(t, "linux/amd64"), Provenance: true}}, []want{{RuleMissingProvenance, ld}}},
		{"no platform covered", nil, []AttestationRequirement{{Platforms: mustPatterns(t, "linux/arm64"), Provenance: true, SBOM: true}}, nil},
		{"two requirements, one finding each", nil, []AttestationRequirement{
			{Platforms: mustPatterns(t, "*"), SBOM: true}, {Platforms: mustPatterns(t, "linux/*"), SBOM: true}}, []want{{RuleMissingSBOM, ld}, {RuleMissingSBOM, wd}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := EvaluateAttestations(s, tc.atts, tc.reqs)
			var got []want
			for _, f := range fs {
				if f.Severity != findings.Error || f.Platform == "" || f.Message == "" {
					t.Errorf("finding %+v: want an error naming the platform", f)
				}
				got = append(got, want{f.Rule, v1.Hash{Algorithm: "sha256", Hex: f.Digest[len("sha256:"):]}})
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("findings %+v, want %v", fs, tc.want)
			}
			for _, w := range tc.want {
				if !slices.Contains(AttestedImages(s, tc.reqs), w.digest) {
					t.Errorf("AttestedImages leaves out %s", w.digest)
				}
			}
		})
	}
	if got := AttestedImages(s, []AttestationRequirement{{Platforms: mustPatterns(t, "*")}}); got != nil {
		t.Errorf("a requirement of keys only reads attestations of %v", got)
	}
}
