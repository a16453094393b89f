package kube

import (
	"strings"
	"testing"

	"github.com/imgctl/imgctl/findings"
	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/snapshot"
	"github.com/imgctl/imgctl/verify"
)

func win(t *testing.T, v string, opts ...regtest.ImageOption) regtest.Entry {
	t.Helper()
	return regtest.Entry{Image: regtest.Must(regtest.WindowsImage(v, opts...))(t)}
}

func linux(t *testing.T, arch string) regtest.Entry {
	t.Helper()
	return regtest.Entry{Image: regtest.Must(regtest.LinuxImage(arch))(t)}
}

// TestCheckNodes gives every node rule a failing and a passing case.
func TestCheckNodes(t *testing.T) {
	only25 := loadSnapshot(t, win(t, regtest.OSVersionLTSC2025))
	both := loadSnapshot(t, linux(t, "amd64"), linux(t, "arm64"), win(t, regtest.OSVersionLTSC2025), win(t, regtest.OSVersionLTSC2022))
	noArm := loadSnapshot(t, linux(t, "amd64"), win(t, regtest.OSVersionLTSC2025))
	quirky := loadSnapshot(t, win(t, "10.0.26100.2894"), win(t, "10.0.20348.3091"))
	stringOrder := loadSnapshot(t, win(t, "10.0.26100.33674"), win(t, "10.0.26100.9999"))
	oldestFirst := loadSnapshot(t, win(t, regtest.OSVersionLTSC2022), win(t, regtest.OSVersionLTSC2025))
	cases := []struct {
		name, nodes string
		s           *snapshot.Snapshot
		rule        string
		sev         findings.Severity // "" = not reported
		mention     []string          // substrings of that rule's message
	}{
		{"2022 node, only a 2025 variant", "nodes-migration.json", only25, RuleNodeNoVariant, findings.Error, []string{"akswin22000000", "build 20348", "containerd-legacy", "windows/amd64:10.0.26100.6584"}},
		{"2022 and 2025 variants", "nodes-migration.json", both, RuleNodeNoVariant, "", nil},
		{"arm64 node without arm64", "nodes-hybrid.json", noArm, RuleNodeNoVariant, findings.Error, []string{"aks-arm64-31416920-vmss000000", "linux/arm64", "containerd"}},
		{"hybrid cluster, full index", "nodes-hybrid.json", both, RuleNodeNoVariant, "", nil},
		{"1.7 on a 2025 node, oldest first", "nodes-2025-containerd17.json", oldestFirst, RuleNodeEngineQuirk, findings.Warning, []string{"akswin25000001", "containerd-legacy", regtest.OSVersionLTSC2022, regtest.OSVersionLTSC2025}},
		{"1.7 on a 2025 node, newest first", "nodes-2025-containerd17.json", quirky, RuleNodeEngineQuirk, "", nil},
		{"containerd 2 on a 2025 node", "nodes-migration.json", quirky, RuleNodeEngineQuirk, "", nil},
		{"1.7 on a 2025 node with one variant", "nodes-2025-containerd17.json", only25, RuleNodeEngineQuirk, "", nil},
		{"containerd 1.6", "nodes-unknown-runtime.json", both, RuleNodeUnknownRuntime, findings.Warning, []string{"akswin22000001", "1.6.36"}},
		{"known runtimes", "nodes-hybrid.json", both, RuleNodeUnknownRuntime, "", nil},
		{"string order on containerd 2", "nodes-hybrid.json", stringOrder, verify.RuleOrderingQuirk, findings.Warning, []string{"akswin25000000", "10.0.26100.9999"}},
		{"string order on containerd 2 with one revision", "nodes-hybrid.json", only25, verify.RuleOrderingQuirk, "", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := CheckNodes(tc.s, readFixture(t, tc.nodes))
			if got := rules(r.Findings)[tc.rule]; got != tc.sev {
				t.Fatalf("%s: severity %q, want %q; findings %+v", tc.rule, got, tc.sev, r.Findings)
			}
			for _, f := range r.Findings {
				if f.Rule != tc.rule {
					continue
				}
				for _, m := range tc.mention {
					if !strings.Contains(f.Message, m) {
						t.Errorf("%s message %q does not mention %q", f.Rule, f.Message, m)
					}
				}
			}
		})
	}
}

// TestCheckNodesRows checks the per-node rows: one per node with its own
// engine, every profile for an unknown runtime.
func TestCheckNodesRows(t *testing.T) {
	s := loadSnapshot(t, win(t, regtest.OSVersionLTSC2025), win(t, regtest.OSVersionLTSC2022))
	r := CheckNodes(s, readFixture(t, "nodes-migration.json"))
	var got []string
	for _, tr := range r.Targets {
		got = append(got, tr.Target+" "+tr.Engine+" "+tr.OSVersion)
	}
	want := "akswin22000000 containerd-legacy " + regtest.OSVersionLTSC2022 + "|akswin25000000 containerd-index-order " + regtest.OSVersionLTSC2025
	if strings.Join(got, "|") != want {
		t.Fatalf("rows %q, want %q", got, want)
	}
	if r.Targets[0].Build != 20348 || r.Targets[0].Selected == "" {
		t.Fatalf("row %+v", r.Targets[0])
	}
	r = CheckNodes(s, readFixture(t, "nodes-unknown-runtime.json"))
	if len(r.Targets) != len(platform.Engines()) {
		t.Fatalf("unknown runtime: %d rows, want one per engine", len(r.Targets))
	}
}

// TestCheckNodesForeignRuntime: a CRI-O node is skipped with a note, not
// judged by containerd's or Docker's rules.
func TestCheckNodesForeignRuntime(t *testing.T) {
	s := loadSnapshot(t, win(t, regtest.OSVersionLTSC2025))
	r := CheckNodes(s, []Node{{Name: "crio-0", OS: "linux", Architecture: "amd64", Runtime: "cri-o://1.33.1"}})
	if len(r.Targets) != 0 || len(r.Findings) != 1 || r.Findings[0].Rule != RuleNodeUnknownRuntime ||
		!strings.Contains(r.Findings[0].Message, "not checked") || !strings.Contains(r.Findings[0].Message, "cri-o") {
		t.Fatalf("rows %+v findings %+v", r.Targets, r.Findings)
	}
}

func TestCheckNodesUnknownPlatform(t *testing.T) {
	r := CheckNodes(loadSnapshot(t, win(t, regtest.OSVersionLTSC2025)), []Node{{Name: "mystery", OS: "windows", Architecture: "amd64", Runtime: "containerd://2.1.4"}})
	if rules(r.Findings)[RuleNodeUnknownPlatform] != findings.Warning || len(r.Targets) != 0 {
		t.Fatalf("findings %+v rows %+v", r.Findings, r.Targets)
	}
}

// TestMerge: with NoDefaultTargets the nodes stand in for verify's default
// targets (and only they decide); with explicit targets both stay.
func TestMerge(t *testing.T) {
	s := loadSnapshot(t, win(t, regtest.OSVersionLTSC2025))
	nodes := readFixture(t, "nodes-hybrid.json")[2:] // the 2025 node
	rep := verify.Evaluate("r", s, verify.Options{})
	if rep.Passed || rules(rep.Findings)[verify.RuleNoVariantForTarget] != findings.Error {
		t.Fatalf("the default ltsc2022 target should fail: %+v", rep.Findings)
	}
	defaults := len(rep.Targets)
	Merge(rep, CheckNodes(s, nodes), false)
	if rep.Passed || len(rep.Targets) != defaults+1 {
		t.Errorf("explicit targets: Passed=%v rows %+v", rep.Passed, rep.Targets)
	}

	rep = verify.Evaluate("r", s, verify.Options{NoDefaultTargets: true})
	if !rep.Passed || len(rep.Targets) != 0 {
		t.Fatalf("NoDefaultTargets still checked targets: %+v", rep)
	}
	Merge(rep, CheckNodes(s, nodes), true)
	if !rep.Passed || len(rep.Targets) != 1 || rep.Targets[0].Target != "akswin25000000" {
		t.Errorf("nodes as targets: Passed=%v rows %+v findings %+v", rep.Passed, rep.Targets, rep.Findings)
	}
}
