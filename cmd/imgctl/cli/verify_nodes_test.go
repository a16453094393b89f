package cli

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/kube"
	"github.com/imgctl/imgctl/verify"
)

const kubeTestdata = "../../../kube/testdata/"

// runStdin is run with stdin.
func runStdin(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Execute(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

// TestVerifyNodes runs verify --nodes with kubectl-shaped inventories
// against indexes in the in-process registry.
func TestVerifyNodes(t *testing.T) {
	reg := regtest.New(t)
	w := func(v string) regtest.Entry { return regtest.Entry{Image: regtest.Must(regtest.WindowsImage(v))(t)} }
	lin := func(arch string) regtest.Entry {
		return regtest.Entry{Image: regtest.Must(regtest.LinuxImage(arch))(t)}
	}
	only25 := push(t, reg, "app:only25", index(t, w(regtest.OSVersionLTSC2025)))
	full := push(t, reg, "app:full", regtest.Must(regtest.MultiOSIndex())(t))
	noArm := push(t, reg, "app:noarm", index(t, lin("amd64"), w(regtest.OSVersionLTSC2025)))
	quirky := push(t, reg, "app:quirky", index(t, w("10.0.26100.2894"), w("10.0.20348.3091")))
	oldestFirst := push(t, reg, "app:oldest-first", index(t, w(regtest.OSVersionLTSC2022), w(regtest.OSVersionLTSC2025)))

	cases := []struct {
		name, ref, nodes string
		extra            []string
		rule             string
		sev              string // "" = not reported
		mention          string
		code             int
	}{
		{"2022 node, only a 2025 variant", only25, "nodes-migration.json", nil, kube.RuleNodeNoVariant, "error", "akswin22000000 (windows/amd64 build 20348 ltsc2022, containerd-legacy)", 1},
		{"mid-migration cluster, both variants", full, "nodes-migration.json", nil, kube.RuleNodeNoVariant, "", "", 0},
		{"hybrid cluster, full index", full, "nodes-hybrid.json", nil, kube.RuleNodeNoVariant, "", "", 0},
		{"hybrid cluster, no arm64 variant", noArm, "nodes-hybrid.json", nil, kube.RuleNodeNoVariant, "error", "aks-arm64-31416920-vmss000000 (linux/arm64, containerd-index-order)", 1},
		{"1.7 on a 2025 node, oldest first", oldestFirst, "nodes-2025-containerd17.json", nil, kube.RuleNodeEngineQuirk, "warning", "picks windows/amd64:" + regtest.OSVersionLTSC2022, 0},
		{"1.7 on a 2025 node, newest first", quirky, "nodes-2025-containerd17.json", nil, kube.RuleNodeEngineQuirk, "", "", 0},
		{"containerd 2 on the 2025 node", quirky, "nodes-migration.json", nil, kube.RuleNodeEngineQuirk, "", "", 0},
		{"containerd 1.6", full, "nodes-unknown-runtime.json", nil, kube.RuleNodeUnknownRuntime, "warning", "containerd 1.6.36 has no profile", 0},
		{"nodes replace the default ltsc2022 target", only25, "nodes-hybrid.json", nil, verify.RuleNoVariantForTarget, "", "", 1},
		{"an explicit --windows still applies", only25, "nodes-2025-containerd17.json", []string{"--windows", "ltsc2022"}, verify.RuleNoVariantForTarget, "error", "ltsc2022", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"verify", tc.ref, "--nodes", kubeTestdata + tc.nodes, "-o", "json"}, tc.extra...)
			out, errOut, code := run(t, args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, out, errOut)
			}
			rep := decodeReport(t, out)
			if got := rep.severity(tc.rule); got != tc.sev {
				t.Fatalf("%s: severity %q, want %q\n%s", tc.rule, got, tc.sev, out)
			}
			if tc.mention != "" && !strings.Contains(out, tc.mention) {
				t.Fatalf("report does not mention %q\n%s", tc.mention, out)
			}
		})
	}
}

// TestVerifyNodesRows checks the per-node rows in JSON and text.
func TestVerifyNodesRows(t *testing.T) {
	reg := regtest.New(t)
	ref := push(t, reg, "app:1", regtest.Must(regtest.MultiOSIndex())(t))
	out, _, code := run(t, "verify", ref, "--nodes", kubeTestdata+"nodes-migration.json", "-o", "json")
	rep := decodeReport(t, out)
	if code != 0 || len(rep.Targets) != 2 {
		t.Fatalf("exit %d, rows %+v", code, rep.Targets)
	}
	for i, want := range []struct {
		target, engine, osv string
		build               uint32
	}{
		{"akswin22000000", "containerd-legacy", regtest.OSVersionLTSC2022, 20348},
		{"akswin25000000", "containerd-index-order", regtest.OSVersionLTSC2025, 26100},
	} {
		got := rep.Targets[i]
		if got.Target != want.target || got.Engine != want.engine || got.OSVersion != want.osv || got.Build != want.build || !strings.HasPrefix(got.Selected, "sha256:") {
			t.Errorf("row %d = %+v, want %+v", i, got, want)
		}
	}
	nodes, err := os.ReadFile(kubeTestdata + "nodes-migration.json")
	if err != nil {
		t.Fatal(err)
	}
	text, _, code := runStdin(t, string(nodes), "verify", ref, "--nodes", "-")
	if code != 0 || !strings.Contains(text, "akswin22000000") || !strings.Contains(text, "PASSED") || strings.Contains(text, "ltsc2025 ") {
		t.Fatalf("exit %d\n%s", code, text)
	}
}

// TestVerifyNodesUsage: an unreadable inventory is a usage error (exit 2)
// that names the flag and the problem, before any registry request.
func TestVerifyNodesUsage(t *testing.T) {
	for name, tc := range map[string]struct{ file, stdin, want string }{
		"bad JSON":      {"-", `{"kind": "List", "items": [`, "invalid node inventory"},
		"not nodes":     {"-", `{"apiVersion": "v1", "kind": "PodList", "items": []}`, `kind "PodList"`},
		"no nodes":      {"-", `{"apiVersion": "v1", "kind": "List", "items": []}`, "has no nodes"},
		"missing file":  {"testdata/does-not-exist.json", "", "does-not-exist.json"},
		"workload YAML": {kubeTestdata + "workloads-good.yaml", "", "invalid node inventory"},
	} {
		t.Run(name, func(t *testing.T) {
			out, errOut, code := runStdin(t, tc.stdin, "verify", "127.0.0.1:1/none:1", "--nodes", tc.file)
			if code != ExitError || !strings.Contains(errOut, "--nodes") || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, want 2 with %q\nstdout: %s\nstderr: %s", code, tc.want, out, errOut)
			}
		})
	}
}
