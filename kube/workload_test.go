package kube

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/imgctl/imgctl/findings"
	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/snapshot"
)

// winPod is a Windows pod whose spec gets extra lines (indented four spaces)
// and whose only container gets ctr (indented six).
func winPod(spec, ctr string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  os:
    name: windows
  tolerations:
    - {key: os, operator: Equal, value: windows, effect: NoSchedule}
%s
  containers:
    - name: c
      image: registry.example.com/app:1
      resources: {limits: {memory: 256Mi}}
%s
`, indent(spec, 2), indent(ctr, 6))
}

func indent(s string, n int) string {
	if s == "" {
		return ""
	}
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		lines[i] = strings.Repeat(" ", n) + lines[i]
	}
	return strings.Join(lines, "\n")
}

const rc2022 = `apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: win}
handler: runhcs-wcow-process
scheduling:
  nodeSelector: {kubernetes.io/os: windows, node.kubernetes.io/windows-build: "10.0.20348"}
  tolerations: [{key: os, operator: Exists}]
---
`

func checkYAML(t *testing.T, in string, o WorkloadOptions) *WorkloadReport {
	t.Helper()
	objs, err := ReadManifests("in.yaml", strings.NewReader(in))
	if err != nil {
		t.Fatalf("%v\n%s", err, in)
	}
	return CheckWorkloads(objs, o)
}

func TestWorkloadRules(t *testing.T) {
	admin := loadSnapshot(t, win(t, regtest.OSVersionLTSC2022, regtest.WithUser("ContainerAdministrator")))
	user := loadSnapshot(t, win(t, regtest.OSVersionLTSC2022))
	only25 := loadSnapshot(t, win(t, regtest.OSVersionLTSC2025))
	def := WorkloadOptions{WindowsTaint: DefaultWindowsTaint}
	with := func(s *snapshot.Snapshot) WorkloadOptions {
		return WorkloadOptions{Image: s, WindowsTaint: DefaultWindowsTaint}
	}
	linuxPod := strings.Replace(winPod("securityContext: {runAsUser: 1}", "lifecycle: {preStop: {exec: {command: [sh]}}}"), "name: windows", "name: linux", 1)
	cases := []struct {
		name, in string
		o        WorkloadOptions
		rule     string
		sev      findings.Severity // "" = not reported
	}{
		{"pod runAsUser", winPod("securityContext: {runAsUser: 1000}", ""), def, RuleWindowsForbiddenField, findings.Error},
		{"container privileged false", winPod("", "securityContext: {privileged: false}"), def, RuleWindowsForbiddenField, findings.Error},
		{"windowsOptions only", winPod("securityContext: {windowsOptions: {runAsUserName: ContainerUser}}", ""), def, RuleWindowsForbiddenField, ""},
		{"null field", winPod("", "securityContext: {privileged: null}"), def, RuleWindowsForbiddenField, ""},
		{"linux pod", linuxPod, def, RuleWindowsForbiddenField, ""},

		{"runAsUserName ContainerAdministrator", winPod("securityContext: {runAsNonRoot: true, windowsOptions: {runAsUserName: ContainerAdministrator}}", ""), def, RuleRunAsNonRootAdministrator, findings.Error},
		{"runAsUserName ContainerUser", winPod("securityContext: {runAsNonRoot: true, windowsOptions: {runAsUserName: ContainerUser}}", ""), with(admin), RuleRunAsNonRootAdministrator, ""},
		{"image user ContainerAdministrator", winPod("", "securityContext: {runAsNonRoot: true}"), with(admin), RuleRunAsNonRootAdministrator, findings.Error},
		{"image user ContainerUser", winPod("", "securityContext: {runAsNonRoot: true}"), with(user), RuleRunAsNonRootAdministrator, ""},
		{"image admin without runAsNonRoot", winPod("", ""), with(admin), RuleRunAsNonRootAdministrator, ""},
		{"image unknown", winPod("", "securityContext: {runAsNonRoot: true}"), def, RuleRunAsNonRootAdministrator, ""},

		{"2022 class, 2025 image", rc2022 + winPod("runtimeClassName: win", ""), with(only25), RuleRuntimeClassNoVariant, findings.Error},
		{"2022 class, 2022 image", rc2022 + winPod("runtimeClassName: win", ""), with(user), RuleRuntimeClassNoVariant, ""},
		{"2022 class, no image", rc2022 + winPod("runtimeClassName: win", ""), def, RuleRuntimeClassNoVariant, ""},
		{"malformed build", strings.Replace(rc2022, `"10.0.20348"`, "ltsc2022", 1), with(user), RuleRuntimeClassNoVariant, findings.Error},

		{"no toleration", strings.Replace(winPod("", ""), "tolerations:", "x-tolerations:", 1), def, RuleMissingWindowsToleration, findings.Warning},
		{"toleration from the RuntimeClass", rc2022 + strings.Replace(winPod("runtimeClassName: win", ""), "tolerations:", "x-tolerations:", 1), def, RuleMissingWindowsToleration, ""},
		{"toleration of everything", strings.Replace(winPod("", ""), "{key: os, operator: Equal, value: windows, effect: NoSchedule}", "{operator: Exists}", 1), def, RuleMissingWindowsToleration, ""},
		{"another taint", winPod("", ""), WorkloadOptions{WindowsTaint: Taint{Key: "sku", Value: "windows", Effect: "NoSchedule"}}, RuleMissingWindowsToleration, findings.Warning},
		{"taint check off", strings.Replace(winPod("", ""), "tolerations:", "x-tolerations:", 1), WorkloadOptions{}, RuleMissingWindowsToleration, ""},
		{"windows by affinity", strings.Replace(strings.Replace(winPod("affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/os, operator: In, values: [windows]}]}]}}}", ""), "name: windows", "name: \"\"", 1), "tolerations:", "x-tolerations:", 1), def, RuleMissingWindowsToleration, findings.Warning},

		{"no memory limit", strings.Replace(winPod("", ""), "resources:", "x-resources:", 1), def, RuleNoMemoryLimit, findings.Warning},
		{"memory limit", winPod("", ""), def, RuleNoMemoryLimit, ""},

		{"exec probe without timeout", winPod("", "livenessProbe: {exec: {command: [cmd, /c, exit 0]}}"), def, RuleExecProbeDefaultTimeout, findings.Warning},
		{"exec probe timeout 1", winPod("", "startupProbe: {exec: {command: [cmd]}, timeoutSeconds: 1}"), def, RuleExecProbeDefaultTimeout, findings.Warning},
		{"exec probe timeout 5", winPod("", "readinessProbe: {exec: {command: [cmd]}, timeoutSeconds: 5}"), def, RuleExecProbeDefaultTimeout, ""},
		{"httpGet probe", winPod("", "readinessProbe: {httpGet: {path: /, port: 80}}"), def, RuleExecProbeDefaultTimeout, ""},

		{"preStop sh", winPod("", "lifecycle: {preStop: {exec: {command: [sh, -c, sleep 5]}}}"), def, RulePreStopNeedsShell, findings.Error},
		{"preStop /usr/bin/bash", winPod("", "lifecycle: {preStop: {exec: {command: [/usr/bin/bash]}}}"), def, RulePreStopNeedsShell, findings.Error},
		{"preStop powershell", winPod("", `lifecycle: {preStop: {exec: {command: ['C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe']}}}`), def, RulePreStopNeedsShell, findings.Warning},
		{"preStop cmd", winPod("", "lifecycle: {preStop: {exec: {command: [cmd.exe, /c, stop.cmd]}}}"), def, RulePreStopNeedsShell, ""},
		{"preStop sleep", winPod("", "lifecycle: {preStop: {sleep: {seconds: 5}}}"), def, RulePreStopNeedsShell, ""},
		{"linux preStop sh", linuxPod, def, RulePreStopNeedsShell, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := checkYAML(t, tc.in, tc.o)
			var got findings.Severity
			for _, f := range r.Findings {
				if f.Rule == tc.rule && got != findings.Error {
					got = f.Severity
				}
			}
			if got != tc.sev {
				t.Fatalf("%s: severity %q, want %q; findings %+v", tc.rule, got, tc.sev, r.Findings)
			}
			if r.Passed != (r.Errors() == 0) {
				t.Fatalf("Passed=%v with %d errors", r.Passed, r.Errors())
			}
		})
	}
}

// TestWorkloadLines checks rule, line, object and container of every
// finding in a multi-document file.
func TestWorkloadLines(t *testing.T) {
	f, err := os.Open("testdata/workloads-bad.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	objs, err := ReadManifests("workloads-bad.yaml", f)
	if err != nil {
		t.Fatal(err)
	}
	img := loadSnapshot(t, win(t, regtest.OSVersionLTSC2025, regtest.WithUser("ContainerAdministrator")))
	r := CheckWorkloads(objs, WorkloadOptions{Image: img, WindowsTaint: DefaultWindowsTaint})
	var got []string
	for _, f := range r.Findings {
		got = append(got, fmt.Sprintf("%s:%d %s %s %s", f.File, f.Line, f.Rule, f.Object, f.Container))
	}
	want := []string{
		"workloads-bad.yaml:12 runtimeclass-no-variant RuntimeClass/windows-2022 ",
		"workloads-bad.yaml:28 missing-windows-toleration Deployment/api ",
		"workloads-bad.yaml:34 windows-forbidden-field Deployment/api ",
		"workloads-bad.yaml:35 windows-forbidden-field Deployment/api ",
		"workloads-bad.yaml:37 run-as-non-root-administrator Deployment/api api",
		"workloads-bad.yaml:39 no-memory-limit Deployment/api api",
		"workloads-bad.yaml:42 windows-forbidden-field Deployment/api api",
		"workloads-bad.yaml:43 windows-forbidden-field Deployment/api api",
		"workloads-bad.yaml:44 windows-forbidden-field Deployment/api api",
		"workloads-bad.yaml:46 exec-probe-default-timeout Deployment/api api",
		"workloads-bad.yaml:53 prestop-needs-shell Deployment/api api",
		"workloads-bad.yaml:65 missing-windows-toleration CronJob/nightly-report ",
		"workloads-bad.yaml:70 run-as-non-root-administrator CronJob/nightly-report report",
		"workloads-bad.yaml:80 prestop-needs-shell CronJob/nightly-report report",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestReadManifests(t *testing.T) {
	objs, err := ReadManifests("x", strings.NewReader("---\n# only a comment\n---\n"+rc2022+"---\n"))
	if err != nil || len(objs) != 1 || objs[0].ID() != "RuntimeClass/win" || objs[0].Line != 5 {
		t.Fatalf("%+v %v", objs, err)
	}
	f, err := os.Open("testdata/workloads-kubectl-list.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	objs, err = ReadManifests("list", f)
	if err != nil || len(objs) != 2 || objs[1].ID() != "Deployment/hello-windows" {
		t.Fatalf("List: %+v %v", objs, err)
	}
	if r := CheckWorkloads(objs, WorkloadOptions{WindowsTaint: DefaultWindowsTaint}); len(r.Findings) != 0 {
		t.Fatalf("kubectl get -o yaml output: %+v", r.Findings)
	}
	for _, in := range []string{"kind: [", "just a string", "apiVersion: v1\nmetadata: {name: x}", "- a\n- b"} {
		if _, err := ReadManifests("bad", strings.NewReader(in)); !errors.Is(err, ErrInvalidManifest) {
			t.Errorf("ReadManifests(%q) = %v, want ErrInvalidManifest", in, err)
		}
	}
}

func TestParseTaint(t *testing.T) {
	for in, want := range map[string]string{"os=windows:NoSchedule": "os=windows:NoSchedule", "sku:NoExecute": "sku:NoExecute", " a=b:PreferNoSchedule ": "a=b:PreferNoSchedule"} {
		if got, err := ParseTaint(in); err != nil || got.String() != want {
			t.Errorf("ParseTaint(%q) = %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "os=windows", "os=windows:Never", "=windows:NoSchedule"} {
		if _, err := ParseTaint(in); !errors.Is(err, ErrInvalidTaint) {
			t.Errorf("ParseTaint(%q) = %v, want ErrInvalidTaint", in, err)
		}
	}
}

// TestRuntimeClassNotGiven: a Windows pod without a toleration of its own
// whose RuntimeClass is among the inputs is judged with the class's
// tolerations; one whose RuntimeClass is not given says so, at
// runtimeClassName, instead of blaming the class for a missing toleration.
func TestRuntimeClassNotGiven(t *testing.T) {
	noTol := strings.Replace(winPod("runtimeClassName: win", ""), "tolerations:", "x-tolerations:", 1)
	rcNoTol := strings.Replace(rc2022, "  tolerations: [{key: os, operator: Exists}]\n", "", 1)
	for _, tc := range []struct {
		name, in string
		line     int    // 0: no finding
		message  string // in the finding's message
	}{
		{"given, tolerates", rc2022 + noTol, 0, ""},
		{"given, does not tolerate", rcNoTol + noTol, 12, "neither it nor its RuntimeClass tolerates the Windows taint os=windows:NoSchedule"},
		{"not given", noTol, 10, "RuntimeClass win not given: pass its manifest to check its tolerations and node selector"},
		{"not given, the pod tolerates", winPod("runtimeClassName: win", ""), 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := checkYAML(t, tc.in, WorkloadOptions{WindowsTaint: DefaultWindowsTaint})
			var got []findings.Finding
			for _, f := range r.Findings {
				if f.Rule == RuleMissingWindowsToleration {
					got = append(got, f)
				}
			}
			if tc.line == 0 {
				if len(got) != 0 {
					t.Fatalf("findings %+v, want none", got)
				}
				return
			}
			if len(got) != 1 || got[0].Line != tc.line || got[0].Severity != findings.Warning || !strings.Contains(got[0].Message, tc.message) {
				t.Fatalf("findings %+v, want one warning at line %d with %q", got, tc.line, tc.message)
			}
			if tc.name == "not given" && strings.Contains(got[0].Message, "neither it nor its RuntimeClass") {
				t.Errorf("message blames the RuntimeClass: %s", got[0].Message)
			}
		})
	}
}

// TestWorkloadReportJSON: check-workload's JSON contract has file, line,
// object and container in every finding, "container": "" for a pod-level
// one, and none of the fields other checks set.
func TestWorkloadReportJSON(t *testing.T) {
	r := &WorkloadReport{Passed: false, Findings: []findings.Finding{
		{Rule: RuleMissingWindowsToleration, Severity: findings.Warning, File: "w.yaml", Line: 3, Object: "Pod/p", Message: "m<1>"},
		{Rule: RuleNoMemoryLimit, Severity: findings.Error, File: "-", Line: 9, Object: "Pod/p", Container: "c", Message: "n"},
	}}
	b, err := json.Marshal(r)
	want := `{"passed":false,"findings":[` +
		`{"rule":"missing-windows-toleration","severity":"warning","file":"w.yaml","line":3,"object":"Pod/p","container":"","message":"m\u003c1\u003e"},` +
		`{"rule":"no-memory-limit","severity":"error","file":"-","line":9,"object":"Pod/p","container":"c","message":"n"}]}`
	if err != nil || string(b) != want {
		t.Errorf("got  %s, %v\nwant %s", b, err, want)
	}
	for _, r := range []*WorkloadReport{{Passed: true, Findings: []findings.Finding{}}, {Passed: true}} {
		b, err := json.Marshal(*r)
		want := `{"passed":true,"findings":[]}`
		if r.Findings == nil {
			want = `{"passed":true,"findings":null}`
		}
		if err != nil || string(b) != want {
			t.Errorf("got %s, %v, want %s", b, err, want)
		}
	}
}
