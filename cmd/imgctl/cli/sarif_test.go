package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/imgctl/imgctl/internal/ghactions"
	"github.com/imgctl/imgctl/internal/testing/buildtest"
	"github.com/imgctl/imgctl/internal/testing/sariftest"
	"github.com/imgctl/imgctl/kube"
	"github.com/imgctl/imgctl/lint"
)

// sarifLog is the part of a SARIF log the tests read.
type sarifLog struct {
	Version string `json:"version"`
	Runs    []struct {
		Tool struct {
			Driver struct {
				Name  string `json:"name"`
				Rules []struct {
					ID string `json:"id"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Results []struct {
			RuleID    string `json:"ruleId"`
			RuleIndex int    `json:"ruleIndex"`
			Level     string `json:"level"`
			Message   struct {
				Text string `json:"text"`
			} `json:"message"`
			Locations []struct {
				PhysicalLocation struct {
					ArtifactLocation struct {
						URI string `json:"uri"`
					} `json:"artifactLocation"`
					Region struct {
						StartLine int `json:"startLine"`
					} `json:"region"`
				} `json:"physicalLocation"`
			} `json:"locations"`
		} `json:"results"`
	} `json:"runs"`
}

// decodeSARIF validates out against the official SARIF 2.1.0 schema and
// decodes it; it checks what every imgctl log has: one run by imgctl
// declaring rules, each result naming a declared rule by id and index.
func decodeSARIF(t *testing.T, out string, rules []string) sarifLog {
	t.Helper()
	if err := sariftest.Validate([]byte(out)); err != nil {
		t.Fatalf("not a valid SARIF 2.1.0 log: %v\n%s", err, out)
	}
	var l sarifLog
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatal(err)
	}
	if l.Version != "2.1.0" || len(l.Runs) != 1 || l.Runs[0].Tool.Driver.Name != "imgctl" {
		t.Fatalf("want one run of imgctl, SARIF 2.1.0:\n%s", out)
	}
	var ids []string
	for _, r := range l.Runs[0].Tool.Driver.Rules {
		ids = append(ids, r.ID)
	}
	if !slices.Equal(ids, rules) {
		t.Errorf("rules %q, want %q", ids, rules)
	}
	for _, r := range l.Runs[0].Results {
		if r.RuleIndex < 0 || r.RuleIndex >= len(ids) || ids[r.RuleIndex] != r.RuleID {
			t.Errorf("result of %s has ruleIndex %d", r.RuleID, r.RuleIndex)
		}
	}
	return l
}

// lintRuleIDs are the rules a lint SARIF log lists, in order.
var lintRuleIDs = []string{lint.RuleRunInWindowsStage, lint.RuleInvalidExecForm, lint.RuleShellFormEntrypoint,
	lint.RuleWindowsBaseRelease, lint.RuleLinkInWindowsStage}

// TestSARIFLint: lint -o sarif is a schema-valid log whose results point
// at the Dockerfile (named by its absolute path) relative to the working
// directory, and at its lines;
// exit 1 as with text.
func TestSARIFLint(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "my app")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	df := filepath.Join(dir, "Dockerfile")
	body := "FROM mcr.microsoft.com/windows/nanoserver:ltsc2022\nRUN mkdir C:\\data\nENTRYPOINT [\"C:\\app\\hello.exe\"]\n"
	if err := os.WriteFile(df, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(base)
	t.Setenv(ghactions.EnvWorkspace, "")
	out, errOut, code := run(t, "lint", "-o", "sarif", "-f", df, "--platform", "windows/amd64", "--windows", "ltsc2022", dir)
	if code != ExitFailed {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errOut)
	}
	l := decodeSARIF(t, out, lintRuleIDs)
	const uri = "my%20app/Dockerfile"
	got := map[string]int{}
	for _, r := range l.Runs[0].Results {
		if len(r.Locations) != 1 || r.Locations[0].PhysicalLocation.ArtifactLocation.URI != uri || r.Level != "error" || r.Message.Text == "" {
			t.Errorf("result %+v: want level error, a message and one location at %s", r, uri)
			continue
		}
		got[r.RuleID] = r.Locations[0].PhysicalLocation.Region.StartLine
	}
	if got[lint.RuleRunInWindowsStage] != 2 || got[lint.RuleInvalidExecForm] != 3 {
		t.Errorf("rule → startLine %v, want run-in-windows-stage 2 and invalid-exec-form 3\n%s", got, out)
	}

	// A clean Dockerfile is a valid log without results, exit 0.
	if err := os.WriteFile(df, []byte("FROM mcr.microsoft.com/windows/nanoserver:ltsc2022\nCOPY app.exe /app/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = run(t, "lint", "-o", "sarif", "-f", df, "--platform", "windows/amd64", "--windows", "ltsc2022", dir)
	if code != ExitOK {
		t.Fatalf("clean: exit %d\n%s%s", code, out, errOut)
	}
	if l := decodeSARIF(t, out, lintRuleIDs); len(l.Runs[0].Results) != 0 || !strings.Contains(out, `"results": []`) {
		t.Errorf("clean Dockerfile: want an empty results array\n%s", out)
	}
}

// TestSARIFCheckWorkload: check-workload -o sarif on the bad workloads is
// a schema-valid log with every finding at its file (relative to
// GITHUB_WORKSPACE) and line, warnings as warnings.
func TestSARIFCheckWorkload(t *testing.T) {
	root, err := buildtest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(ghactions.EnvWorkspace, root)
	jsonOut, _, _ := run(t, "check-workload", kubeTestdata+"workloads-bad.yaml", "-o", "json")
	want := decodeWorkloadReport(t, jsonOut)
	out, errOut, code := run(t, "check-workload", kubeTestdata+"workloads-bad.yaml", "-o", "sarif")
	if code != ExitFailed {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errOut)
	}
	l := decodeSARIF(t, out, kube.WorkloadRules)
	res := l.Runs[0].Results
	if len(res) != len(want.Findings) || len(res) == 0 {
		t.Fatalf("%d results for %d findings", len(res), len(want.Findings))
	}
	for i, f := range want.Findings {
		r := res[i]
		loc := r.Locations[0].PhysicalLocation
		if r.RuleID != f.Rule || r.Level != f.Severity || loc.ArtifactLocation.URI != "kube/testdata/workloads-bad.yaml" ||
			loc.Region.StartLine != f.Line || !strings.Contains(r.Message.Text, f.Object) || !strings.Contains(r.Message.Text, f.Message) {
			t.Errorf("result %d = %+v, want %+v at kube/testdata/workloads-bad.yaml", i, r, f)
		}
	}
}

// TestSARIFOnlyForLintAndCheckWorkload: -o sarif on any verb but lint,
// check-workload and verify, and an unknown -o, are usage errors (exit 2)
// before any work.
func TestSARIFOnlyForLintAndCheckWorkload(t *testing.T) {
	for _, args := range [][]string{
		{"inspect", "127.0.0.1:1/app:1", "-o", "sarif"},
		{"version", "-o", "sarif"},
		{"-o", "sarif", "promote", "127.0.0.1:1/a:1", "127.0.0.1:1/b:1"},
		{"lint", "-o", "xml", "."},
	} {
		out, errOut, code := run(t, args...)
		if code != ExitError || !strings.Contains(errOut, "--output") || strings.Contains(errOut, "127.0.0.1:1") {
			t.Errorf("%q: exit %d, want 2 naming --output before any request\n%s%s", args, code, out, errOut)
		}
	}
}
