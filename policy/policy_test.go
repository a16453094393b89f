package policy

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/imgctl/imgctl/findings"
	"github.com/imgctl/imgctl/internal/testing/signtest"
	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/sign"
	"github.com/imgctl/imgctl/verify"
)

func TestExamplePolicy(t *testing.T) {
	t.Parallel()
	p, err := Load("../examples/policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Targets) != 2 || len(p.RequirePlatforms) != 4 || !p.RunAsNonRoot || len(p.AllowedBases) == 0 {
		t.Fatalf("example policy read as %+v", p)
	}
	if got, want := p.KeyPaths(), []string{filepath.Join("../examples", "cosign.pub")}; got[0] != want[0] {
		t.Fatalf("key paths %v, want %v", got, want)
	}
	if len(p.SupplyChain) != 2 || !p.SupplyChain[0].Provenance || !p.SupplyChain[0].SBOM || len(p.SupplyChain[0].Builders) != 3 ||
		len(p.SupplyChain[1].Keys) != 1 {
		t.Fatalf("example supply chain read as %+v", p.SupplyChain)
	}
}

func TestParseRejects(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, doc string
		is        error
		msg       string
	}{
		{"unknown field", "targets: [ltsc2022]\nsigners: [a.pub]\n", ErrInvalidPolicy, "signers"},
		{"misspelt nested field", "rules: {error: [ordering-quirk]}\n", ErrInvalidPolicy, "error"},
		{"unknown rule", "rules: {errors: [no-such-rule]}\n", ErrUnknownRule, "no-such-rule"},
		{"rule in both lists", "rules: {errors: [foreign-layers], ignore: [foreign-layers]}\n", ErrInvalidPolicy, "both"},
		{"keys but signatures ignored", "keys: [a.pub]\nrules: {ignore: [unsigned]}\n", ErrInvalidPolicy, "ignores"},
		{"bad target", "targets: [ltsc2016]\n", platform.ErrUnknownTarget, "ltsc2016"},
		{"bad platform", "requirePlatforms: [linux]\n", platform.ErrInvalidPlatform, "linux"},
		{"bad base", "allowedBases: ['UPPER/Case']\n", ErrInvalidPolicy, "UPPER"},
		{"empty engines", "engines: []\n", ErrInvalidPolicy, "engines: the list is empty"},
		{"bad engine release", "engines: [containerd@garbage]\n", platform.ErrUnknownRelease, "garbage"},
		{"unsupported engine release", "engines: [containerd@0.1]\n", platform.ErrUnknownRelease, "containerd 0.1"},
		{"engine without version", "engines: ['docker@']\n", platform.ErrUnknownRelease, "docker@"},
		{"one profile twice", "engines: [containerd@2.0.4, containerd@2.1.4]\n", ErrInvalidPolicy, "same profile"},
		{"version 2", "version: 2\n", ErrInvalidPolicy, "version 2"},
		{"empty", "", ErrInvalidPolicy, "empty"},
		{"two documents", "targets: [ltsc2022]\n---\ntargets: [ltsc2025]\n", ErrInvalidPolicy, "one YAML document"},
		{"wrong type", "hostProcess: maybe\n", ErrInvalidPolicy, "maybe"},
		{"supplyChain unknown field", "supplyChain: [{platforms: ['*'], sboms: true}]\n", ErrInvalidPolicy, "sboms"},
		{"supplyChain misspelt builder field", "supplyChain: [{platforms: ['*'], provenance: true, builders: [{builderID: x}]}]\n", ErrInvalidPolicy, "builderID"},
		{"supplyChain no platforms", "supplyChain: [{sbom: true}]\n", ErrInvalidPolicy, "platforms"},
		{"supplyChain bad platform", "supplyChain: [{platforms: [linux], sbom: true}]\n", platform.ErrInvalidPlatform, "linux"},
		{"supplyChain bad pattern", "supplyChain: [{platforms: ['win*/amd64'], sbom: true}]\n", platform.ErrInvalidPlatform, "win*"},
		{"supplyChain builders without provenance", "supplyChain: [{platforms: ['*'], builders: [{buildType: x}], sbom: true}]\n", ErrInvalidPolicy, "provenance: true"},
		{"supplyChain empty builder", "supplyChain: [{platforms: ['*'], provenance: true, builders: [{}]}]\n", ErrInvalidPolicy, "builders[0]"},
		{"supplyChain requires nothing", "supplyChain: [{platforms: ['*']}]\n", ErrInvalidPolicy, "requires nothing"},
		{"supplyChain empty key", "supplyChain: [{platforms: ['*'], keys: ['']}]\n", ErrInvalidPolicy, "empty path"},
		{"supplyChain wrong type", "supplyChain: [{platforms: ['*'], sbom: yes please}]\n", ErrInvalidPolicy, "yes please"},
		{"supplyChain keys but signatures ignored", "supplyChain: [{platforms: ['*'], keys: [a.pub]}]\nrules: {ignore: [bad-signature]}\n", ErrInvalidPolicy, "ignores"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.doc), "")
			if !errors.Is(err, tc.is) || !errors.Is(err, ErrInvalidPolicy) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("Parse: %v, want %v mentioning %q", err, tc.is, tc.msg)
			}
		})
	}
}

func TestRulesApply(t *testing.T) {
	t.Parallel()
	rep := &verify.Report{Passed: false, Findings: []findings.Finding{
		{Rule: verify.RuleForeignLayers, Severity: findings.Warning},
		{Rule: verify.RuleMissingOSVersion, Severity: findings.Error},
		{Rule: verify.RuleOrderingQuirk, Severity: findings.Warning},
	}}
	Rules{Ignore: []string{verify.RuleMissingOSVersion}}.Apply(rep)
	if !rep.Passed || len(rep.Findings) != 2 {
		t.Fatalf("ignoring the only error: passed=%v findings=%v", rep.Passed, rep.Findings)
	}
	Rules{Errors: []string{verify.RuleOrderingQuirk}}.Apply(rep)
	if rep.Passed || rep.Findings[1].Severity != findings.Error {
		t.Fatalf("raising a warning: passed=%v findings=%v", rep.Passed, rep.Findings)
	}
}

// TestNewGatePrecedence: list flags add to the policy, booleans are or-ed,
// keys from both are required.
func TestNewGatePrecedence(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pub, err := os.ReadFile(signtest.NewKey(t).PublicPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a.pub", "b.pub"} {
		if err := os.WriteFile(filepath.Join(dir, n), pub, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := Parse([]byte("targets: [ltsc2022]\nrequirePlatforms: [linux/amd64]\nhostProcess: true\nkeys: [a.pub]\n"), dir)
	if err != nil {
		t.Fatal(err)
	}
	flags := verify.Options{RunAsNonRoot: true}
	flags.Targets, _ = platform.ParseTargets([]string{"ltsc2025", "20348"})
	flags.RequirePlatforms, _ = platform.ParseList([]string{"linux/arm64"})
	g, err := NewGate(p, flags, []string{filepath.Join(dir, "b.pub")}, "")
	if err != nil {
		t.Fatal(err)
	}
	v := g.Verify
	if len(v.Targets) != 2 || v.Targets[0].Name != "ltsc2022" || v.Targets[1].Name != "ltsc2025" {
		t.Errorf("targets %v, want ltsc2022 then ltsc2025 (20348 is ltsc2022)", v.Targets)
	}
	if len(v.RequirePlatforms) != 2 || !v.HostProcess || !v.RunAsNonRoot || len(g.Keys) != 2 {
		t.Errorf("gate %+v, %d keys", v, len(g.Keys))
	}
	if _, err := NewGate(&Policy{Rules: Rules{Ignore: []string{sign.RuleUnsigned}}}, verify.Options{}, []string{filepath.Join(dir, "a.pub")}, ""); !errors.Is(err, ErrInvalidPolicy) {
		t.Errorf("--key with a policy ignoring unsigned: %v, want ErrInvalidPolicy", err)
	}
	if _, err := NewGate(nil, verify.Options{}, []string{filepath.Join(dir, "missing.pub")}, ""); err == nil {
		t.Error("a missing key file was accepted")
	}
}

// TestGateEngines: a policy's engines decide, Docker's containerd store
// joins the engines simulated when named, and --engine stays as given.
func TestGateEngines(t *testing.T) {
	t.Parallel()
	p, err := Parse([]byte("engines: [containerd@2.0.4+azure, containerd@2.1.6, docker@29.7+containerd-store]\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGate(p, verify.Options{}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{platform.ContainerdIndexOrder, platform.ContainerdLTSCFloor, platform.DockerStoreOSFeatures}
	if !slices.Equal(g.Verify.Deciding, want) {
		t.Errorf("deciding %v, want %v", g.Verify.Deciding, want)
	}
	var sim []string
	for _, e := range g.Verify.Engines {
		sim = append(sim, e.Name())
	}
	if len(sim) != len(platform.Engines())+1 || sim[len(sim)-1] != platform.DockerStoreOSFeatures {
		t.Errorf("simulated %v: want every release line and the named containerd store", sim)
	}
	given, _, _ := platform.ParseEngine("containerd@1.7.30")
	g, err = NewGate(p, verify.Options{Engines: []platform.Engine{given}}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Verify.Engines) != 4 || g.Verify.Engines[0].Name() != platform.ContainerdLegacy {
		t.Errorf("--engine then the policy's: %v", g.Verify.Engines)
	}
	if g, err := NewGate(&Policy{}, verify.Options{}, nil, ""); err != nil || g.Verify.Deciding != nil || g.Verify.Engines != nil {
		t.Errorf("no engines key: %v %+v", err, g)
	}
}
