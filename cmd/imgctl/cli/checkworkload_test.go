package cli

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/kube"
)

// jsonWorkloadReport is the check-workload -o json contract, decoded
// strictly.
type jsonWorkloadReport struct {
	Passed   *bool `json:"passed"`
	Findings []struct {
		Rule      string `json:"rule"`
		Severity  string `json:"severity"`
		File      string `json:"file"`
		Line      int    `json:"line"`
		Object    string `json:"object"`
		Container string `json:"container"`
		Message   string `json:"message"`
	} `json:"findings"`
}

func decodeWorkloadReport(t *testing.T, s string) jsonWorkloadReport {
	t.Helper()
	var r jsonWorkloadReport
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil || r.Passed == nil || r.Findings == nil {
		t.Fatalf("decoding check-workload JSON: %v\n%s", err, s)
	}
	return r
}

// find returns "severity file:line container" of the first finding of rule
// on object, or "".
func (r jsonWorkloadReport) find(rule, object string) string {
	for _, f := range r.Findings {
		if f.Rule == rule && f.Object == object {
			return f.Severity + " " + f.File[strings.LastIndex(f.File, "/")+1:] + ":" + strconv.Itoa(f.Line) + " " + f.Container
		}
	}
	return ""
}

// TestCheckWorkloadRules gives every rule a failing case (workloads-bad.yaml)
// and a passing one (workloads-good.yaml, the same objects fixed), through
// the CLI against an index in the in-process registry.
func TestCheckWorkloadRules(t *testing.T) {
	reg := regtest.New(t)
	adminOnly25 := push(t, reg, "app:admin25", index(t, regtest.Entry{Image: regtest.Must(regtest.WindowsImage(regtest.OSVersionLTSC2025, regtest.WithUser("ContainerAdministrator")))(t)}))
	good := push(t, reg, "app:good", regtest.Must(regtest.MultiOSIndex())(t))

	bad, _, code := run(t, "check-workload", kubeTestdata+"workloads-bad.yaml", "--image-index", adminOnly25, "-o", "json")
	if code != ExitFailed {
		t.Fatalf("workloads-bad.yaml: exit %d, want 1\n%s", code, bad)
	}
	fixed, errOut, code := run(t, "check-workload", kubeTestdata+"workloads-good.yaml", "--image-index", good, "-o", "json")
	if code != ExitOK {
		t.Fatalf("workloads-good.yaml: exit %d, want 0\n%s%s", code, fixed, errOut)
	}
	badRep, goodRep := decodeWorkloadReport(t, bad), decodeWorkloadReport(t, fixed)
	if len(goodRep.Findings) != 0 || !*goodRep.Passed || *badRep.Passed {
		t.Fatalf("good: %s\nbad passed: %v", fixed, *badRep.Passed)
	}
	for _, tc := range []struct{ rule, object, want string }{
		{kube.RuleWindowsForbiddenField, "Deployment/api", "error workloads-bad.yaml:34 "},
		{kube.RuleRunAsNonRootAdministrator, "Deployment/api", "error workloads-bad.yaml:37 api"},
		{kube.RuleRunAsNonRootAdministrator, "CronJob/nightly-report", "error workloads-bad.yaml:70 report"},
		{kube.RuleRuntimeClassNoVariant, "RuntimeClass/windows-2022", "error workloads-bad.yaml:12 "},
		{kube.RuleMissingWindowsToleration, "Deployment/api", "warning workloads-bad.yaml:28 "},
		{kube.RuleMissingWindowsToleration, "CronJob/nightly-report", "warning workloads-bad.yaml:65 "},
		{kube.RuleNoMemoryLimit, "Deployment/api", "warning workloads-bad.yaml:39 api"},
		{kube.RuleExecProbeDefaultTimeout, "Deployment/api", "warning workloads-bad.yaml:46 api"},
		{kube.RulePreStopNeedsShell, "Deployment/api", "error workloads-bad.yaml:53 api"},
		{kube.RulePreStopNeedsShell, "CronJob/nightly-report", "warning workloads-bad.yaml:80 report"},
		{kube.RuleWindowsForbiddenField, "Deployment/web", ""}, // a Linux workload
	} {
		if got := badRep.find(tc.rule, tc.object); got != tc.want {
			t.Errorf("bad %s %s = %q, want %q", tc.rule, tc.object, got, tc.want)
		}
		if got := goodRep.find(tc.rule, tc.object); got != "" {
			t.Errorf("good %s %s = %q, want none", tc.rule, tc.object, got)
		}
	}
	// The image decides runAsNonRoot without runAsUserName: ContainerUser passes.
	out, _, _ := run(t, "check-workload", kubeTestdata+"workloads-bad.yaml", "--image-index", good, "-o", "json")
	if got := decodeWorkloadReport(t, out).find(kube.RuleRunAsNonRootAdministrator, "CronJob/nightly-report"); got != "" {
		t.Errorf("ContainerUser image: %q", got)
	}
}

// TestCheckWorkloadExample: the example deployment passes against a good
// index, from a file and from stdin, and as kubectl prints it back.
func TestCheckWorkloadExample(t *testing.T) {
	reg := regtest.New(t)
	good := push(t, reg, "hello:1.0.0", regtest.Must(regtest.MultiOSIndex())(t))
	const example = "../../../examples/hello/deploy/windows.yaml"
	for _, args := range [][]string{
		{"check-workload", example, "--image-index", good},
		{"check-workload", kubeTestdata + "workloads-kubectl-list.yaml", "--image-index", good},
	} {
		out, errOut, code := run(t, args...)
		if code != ExitOK || !strings.Contains(out, "PASSED: 0 error(s), 0 finding(s)") {
			t.Errorf("%v: exit %d\n%s%s", args[1], code, out, errOut)
		}
	}
	out, _, code := runStdin(t, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  os: {name: windows}\n  tolerations: [{operator: Exists}]\n  containers: [{name: c, image: x}]\n", "check-workload", "-")
	if code != ExitOK || !strings.Contains(out, "-:7: warning no-memory-limit Pod/p container c:") {
		t.Errorf("warnings only from stdin: exit %d\n%s", code, out)
	}
}

func TestCheckWorkloadUsage(t *testing.T) {
	for name, tc := range map[string]struct {
		args  []string
		stdin string
		want  string
	}{
		"bad YAML":       {[]string{"-"}, "kind: [", "invalid manifest: -: document 1"},
		"no kind":        {[]string{"-"}, "apiVersion: v1\nmetadata: {name: x}\n", "has no kind"},
		"missing file":   {[]string{"does-not-exist.yaml"}, "", "does-not-exist.yaml"},
		"no file":        {nil, "", "requires at least 1 arg"},
		"bad taint":      {[]string{"-", "--windows-taint", "os=windows"}, "", "invalid taint"},
		"registry error": {[]string{kubeTestdata + "workloads-good.yaml", "--image-index", "127.0.0.1:1/none:1"}, "", "--image-index"},
		"stdin twice":    {[]string{"-", "-"}, "", "stdin"},
	} {
		t.Run(name, func(t *testing.T) {
			out, errOut, code := runStdin(t, tc.stdin, append([]string{"check-workload"}, tc.args...)...)
			if code != ExitError || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, want 2 with %q\nstdout: %s\nstderr: %s", code, tc.want, out, errOut)
			}
		})
	}
}

// TestCheckWorkloadTaintFlag: --windows-taint names the taint to tolerate,
// and "" turns the rule off.
func TestCheckWorkloadTaintFlag(t *testing.T) {
	file := kubeTestdata + "workloads-good.yaml"
	out, _, _ := run(t, "check-workload", file, "--windows-taint", "sku=windows:NoExecute", "-o", "json")
	if got := decodeWorkloadReport(t, out).find(kube.RuleMissingWindowsToleration, "Deployment/api"); got == "" {
		t.Errorf("a taint nothing tolerates: no finding\n%s", out)
	}
	out, _, _ = run(t, "check-workload", kubeTestdata+"workloads-bad.yaml", "--windows-taint", "", "-o", "json")
	if got := decodeWorkloadReport(t, out).find(kube.RuleMissingWindowsToleration, "Deployment/api"); got != "" {
		t.Errorf("--windows-taint \"\": %q", got)
	}
}
