package rebase

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// slsaV1 is the part of SLSA provenance v1 the test reads back from
// buildx's output.
type slsaV1 struct {
	BuildDefinition struct {
		BuildType            string `json:"buildType"`
		ExternalParameters   map[string]any
		ResolvedDependencies []struct {
			Name        string            `json:"name"`
			URI         string            `json:"uri"`
			Digest      map[string]string `json:"digest"`
			Annotations map[string]any    `json:"annotations"`
		} `json:"resolvedDependencies"`
	} `json:"buildDefinition"`
	RunDetails struct {
		Builder struct {
			ID      string            `json:"id"`
			Version map[string]string `json:"version"`
		} `json:"builder"`
		Metadata struct {
			InvocationID string `json:"invocationId"`
		} `json:"metadata"`
	} `json:"runDetails"`
}

// TestBuildxReadsRebaseProvenance: buildx's own loader, the code behind
// `docker buildx imagetools inspect --format '{{json .Provenance}}'`, reads
// imgctl's provenance for every platform of a rebased index. Its template
// turns errors into an empty result, so the test asserts the predicate's
// fields, not the absence of an error. It also reads BuildKit's provenance
// of the source, which the new one replaces.
func TestBuildxReadsRebaseProvenance(t *testing.T) {
	f := newFixture(t)
	f.moveBases(t, winNew)
	res, target := rebaseApp(t, f, testOptions())
	var before map[string]struct{ SLSA map[string]any }
	if err := json.Unmarshal(regtest.BuildxInspect(t, f.reg.Host(), f.app.String(), "{{json .Provenance}}"), &before); err != nil {
		t.Fatal(err)
	}
	out := regtest.BuildxInspect(t, f.reg.Host(), target.String(), "{{json .Provenance}}")
	var got map[string]struct{ SLSA slsaV1 }
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	// buildx keys platforms without os.version or the arm64 variant.
	byPlatform := map[string]Variant{}
	for _, v := range res.Variants {
		key := map[string]string{"windows/amd64:" + winOld: "windows/amd64", "linux/arm64/v8": "linux/arm64"}[v.Platform]
		if key == "" {
			key = v.Platform
		}
		byPlatform[key] = v
	}
	if len(got) != 3 || len(before) != 3 {
		t.Fatalf("buildx read provenance for %d platforms after, %d before, want 3: %s", len(got), len(before), out)
	}
	for p, prov := range got {
		v, ok := byPlatform[p]
		if !ok {
			t.Errorf("unexpected platform %s", p)
			continue
		}
		if before[p].SLSA["buildType"] != "https://mobyproject.org/buildkit@v1" {
			t.Errorf("%s: source provenance %v", p, before[p].SLSA)
		}
		s := prov.SLSA
		if s.BuildDefinition.BuildType != BuildType || s.RunDetails.Builder.ID != DefaultBuilderID ||
			s.RunDetails.Builder.Version["imgctl"] != "v1.2.3-test" || s.RunDetails.Metadata.InvocationID == "" {
			t.Errorf("%s: %+v", p, s)
		}
		if s.BuildDefinition.ExternalParameters["source"] != f.app.String() {
			t.Errorf("%s: externalParameters %v", p, s.BuildDefinition.ExternalParameters)
		}
		want := map[string]string{
			DependencySource:  v.Digest,
			DependencyOldBase: "",
			DependencyNewBase: v.NewBase,
		}
		seen := map[string]bool{}
		for _, d := range s.BuildDefinition.ResolvedDependencies {
			seen[d.Name] = true
			dg := "sha256:" + d.Digest["sha256"]
			switch d.Name {
			case DependencyOldBase:
				if dg == v.NewBase || d.Annotations["recorded"] != v.OldBase || !strings.HasPrefix(d.URI, "pkg:docker/"+f.reg.Host()+"/base/") {
					t.Errorf("%s: old base %+v", p, d)
				}
			case DependencyAttestation:
				if d.Annotations["subject"] != v.Digest {
					t.Errorf("%s: old attestation %+v", p, d)
				}
			default:
				if w, ok := want[d.Name]; !ok || dg != w {
					t.Errorf("%s: dependency %+v, want digest %s", p, d, w)
				}
			}
		}
		for _, n := range []string{DependencySource, DependencyOldBase, DependencyNewBase, DependencyAttestation} {
			if !seen[n] {
				t.Errorf("%s: no %s dependency", p, n)
			}
		}
	}
}
