package buildtest

import (
	"testing"

	"github.com/imgctl/imgctl/policy"
	"github.com/imgctl/imgctl/rebase"
)

// TestSupplyChainPolicy: imgctl's policy parser reads the file, with both
// builders as written and the keys.
func TestSupplyChainPolicy(t *testing.T) {
	p, err := policy.Parse([]byte(SupplyChainPolicy(true, []string{"/keys/a.pub", "/keys/b.pub"}, BuildKitBuilder, RebaseBuilder)), "/etc/imgctl")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.SupplyChain) != 1 {
		t.Fatalf("%d supplyChain entries, want 1", len(p.SupplyChain))
	}
	sc := p.SupplyChain[0]
	want := []policy.Builder{{BuildType: BuildKitBuildType}, {BuilderID: rebase.DefaultBuilderID, BuildType: rebase.BuildType}}
	if !sc.Provenance || !sc.SBOM || len(sc.Keys) != 2 || len(sc.Builders) != 2 || sc.Builders[0] != want[0] || sc.Builders[1] != want[1] {
		t.Errorf("supplyChain = %+v, want provenance, an SBOM, 2 keys and builders %+v", sc, want)
	}
	if p, err := policy.Parse([]byte(SupplyChainPolicy(false, nil, BuildKitBuilder)), "/etc/imgctl"); err != nil || p.SupplyChain[0].SBOM || len(p.SupplyChain[0].Keys) != 0 {
		t.Errorf("without keys or SBOM: %+v, %v", p, err)
	}
}
