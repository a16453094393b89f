package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/imgctl/imgctl/findings"
	"github.com/imgctl/imgctl/internal/ghactions"
	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/lint"
	"github.com/imgctl/imgctl/verify"
)

// stepSummary points GITHUB_STEP_SUMMARY at a file that an earlier step
// already wrote to, and returns its path and that content.
func stepSummary(t *testing.T) (string, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "step_summary.md")
	earlier := "## an earlier step\n\n"
	if err := os.WriteFile(path, []byte(earlier), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(ghactions.EnvStepSummary, path)
	return path, earlier
}

// readSummary returns what the command appended to the step summary,
// failing when it truncated what was there.
func readSummary(t *testing.T, path, earlier string) string {
	t.Helper()
	got := mustRead(t, path)
	if !strings.HasPrefix(got, earlier) {
		t.Fatalf("the step summary lost what an earlier step wrote:\n%s", got)
	}
	return strings.TrimPrefix(got, earlier)
}

// annotations returns the workflow-command lines of out.
func annotations(out string) []string {
	var lines []string
	for l := range strings.Lines(out) {
		if strings.HasPrefix(l, "::") {
			lines = append(lines, strings.TrimSuffix(l, "\n"))
		}
	}
	return lines
}

// TestGitHubLint: in GitHub Actions (GITHUB_ACTIONS=true, no flag) lint
// prints its findings as error annotations at their file, relative to
// GITHUB_WORKSPACE, and line, at most ten of them with the last counting
// the rest, and appends the findings to the step summary; exit 1 as ever.
func TestGitHubLint(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("FROM mcr.microsoft.com/windows/nanoserver:ltsc2022\n")
	const runs = 14
	for i := range runs {
		fmt.Fprintf(&b, "RUN echo %d, 100%%\n", i)
	}
	df := filepath.Join(dir, "Dockerfile")
	if err := os.WriteFile(df, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(ghactions.EnvActions, "true")
	t.Setenv(ghactions.EnvWorkspace, dir)
	path, earlier := stepSummary(t)

	out, errOut, code := run(t, "lint", "-f", df, "--platform", "windows/amd64", "--windows", "ltsc2022", dir)
	if code != ExitFailed {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, df+":2: [run-in-windows-stage]") {
		t.Errorf("the text report is gone:\n%s", out)
	}
	anns := annotations(out)
	if len(anns) != ghactions.PerStepLimit {
		t.Fatalf("%d annotations, want %d:\n%s", len(anns), ghactions.PerStepLimit, out)
	}
	first := regexp.MustCompile(`^::error file=Dockerfile,line=2,title=run-in-windows-stage::windows/amd64:10\.0\.20348: .*RUN "RUN echo 0, 100%25"`)
	if !first.MatchString(anns[0]) {
		t.Errorf("first annotation %q does not match %s", anns[0], first)
	}
	for i, a := range anns[:ghactions.PerStepLimit-1] {
		if want := fmt.Sprintf("::error file=Dockerfile,line=%d,title=%s::", i+2, lint.RuleRunInWindowsStage); !strings.HasPrefix(a, want) {
			t.Errorf("annotation %d = %q, want prefix %q", i, a, want)
		}
	}
	rest := runs - (ghactions.PerStepLimit - 1)
	if want := fmt.Sprintf("::error title=%d error annotations not shown::... and %d more findings, see the step summary", rest, rest); anns[ghactions.PerStepLimit-1] != want {
		t.Errorf("last annotation = %q, want %q", anns[ghactions.PerStepLimit-1], want)
	}
	sum := readSummary(t, path, earlier)
	for _, want := range []string{"### imgctl lint `Dockerfile`", "**FAILED**: 14 error(s), 14 finding(s)",
		"| rule | severity | message | location |", "| `run-in-windows-stage` | error |", "| Dockerfile:15 |"} {
		if !strings.Contains(sum, want) {
			t.Errorf("step summary lacks %q:\n%s", want, sum)
		}
	}
	if strings.Count(sum, "`run-in-windows-stage`") != runs {
		t.Errorf("the step summary lists %d findings, want all %d:\n%s", strings.Count(sum, "`run-in-windows-stage`"), runs, sum)
	}

	// --github=false turns it off inside Actions.
	out, _, code = run(t, "lint", "--github=false", "-f", df, "--platform", "windows/amd64", "--windows", "ltsc2022", dir)
	if code != ExitFailed || len(annotations(out)) != 0 {
		t.Errorf("--github=false: exit %d, annotations:\n%s", code, out)
	}
	if readSummary(t, path, earlier) != sum {
		t.Error("--github=false appended to the step summary")
	}
}

// TestGitHubVerify: verify --github with -o json keeps stdout one JSON
// document and puts the annotations on stderr; the step summary has the
// platform table with each variant's os.version and LTSC, the variant each
// engine selects on each target, and the findings.
func TestGitHubVerify(t *testing.T) {
	reg := regtest.New(t)
	w25 := regtest.Must(regtest.WindowsImage(regtest.OSVersionLTSC2025))(t)
	w19 := regtest.Must(regtest.WindowsImage("10.0.17763.6893"))(t)
	lin := regtest.Must(regtest.LinuxImage("amd64"))(t)
	ref := push(t, reg, "app:gh", index(t, regtest.Entry{Image: lin}, regtest.Entry{Image: w25}, regtest.Entry{Image: w19}))
	path, earlier := stepSummary(t)

	out, errOut, code := run(t, "verify", ref, "--github", "--windows", "ltsc2022,ltsc2025", "-o", "json")
	if code != ExitFailed {
		t.Fatalf("exit %d, want 1 (no variant for ltsc2022)\n%s%s", code, out, errOut)
	}
	rep := decodeReport(t, out)
	if rep.severity(verify.RuleNoVariantForTarget) != "error" || rep.severity(verify.RuleUnreachableVariant) != "warning" {
		t.Fatalf("fixture no longer has the findings: %s", out)
	}
	anns := annotations(errOut)
	if len(anns) != len(rep.Findings) {
		t.Fatalf("%d annotations on stderr for %d findings:\n%s", len(anns), len(rep.Findings), errOut)
	}
	wantAnn := map[string]bool{
		"::error title=" + verify.RuleNoVariantForTarget + "::":   false,
		"::warning title=" + verify.RuleUnreachableVariant + "::": false,
	}
	for _, a := range anns {
		for p := range wantAnn {
			if strings.HasPrefix(a, p) {
				wantAnn[p] = true
			}
		}
	}
	for p, seen := range wantAnn {
		if !seen {
			t.Errorf("no annotation %q in:\n%s", p, errOut)
		}
	}

	sum := readSummary(t, path, earlier)
	for _, want := range []string{
		"### imgctl verify `" + ref + "`",
		"**FAILED**",
		"| platform | os.version | LTSC | digest |",
		"| windows/amd64 | " + regtest.OSVersionLTSC2025 + " | ltsc2025 | `" + digestOf(t, w25) + "` |",
		"| windows/amd64 | 10.0.17763.6893 | ltsc2019 | `" + digestOf(t, w19) + "` |",
		"| linux/amd64 | - | - | `" + digestOf(t, lin) + "` |",
		"| target | build | engine | selects | os.version | LTSC |",
		"| ltsc2025 | 26100 | containerd | `" + shortDigest(digestOf(t, w25)) + "` | " + regtest.OSVersionLTSC2025 + " | ltsc2025 |",
		"| ltsc2022 | 20348 | containerd | (nothing) |",
		"| `" + verify.RuleNoVariantForTarget + "` | error |",
		"| `" + verify.RuleUnreachableVariant + "` | warning |",
	} {
		if !strings.Contains(sum, want) {
			t.Errorf("step summary lacks %q:\n%s", want, sum)
		}
	}

	// A step summary that cannot be written is a warning: the exit code
	// stays the check's.
	t.Setenv(ghactions.EnvStepSummary, t.TempDir())
	_, errOut, code = run(t, "verify", ref, "--github", "--windows", "ltsc2022,ltsc2025")
	if code != ExitFailed || !strings.Contains(errOut, "imgctl: warning: GitHub step summary:") {
		t.Errorf("unwritable step summary: exit %d, want 1 with a warning\n%s", code, errOut)
	}
	t.Setenv(ghactions.EnvStepSummary, path)

	// Without --github and outside Actions: nothing.
	t.Setenv(ghactions.EnvActions, "")
	out, errOut, _ = run(t, "verify", ref, "--windows", "ltsc2022,ltsc2025")
	if len(annotations(out+errOut)) != 0 || readSummary(t, path, earlier) != sum {
		t.Errorf("GitHub output without --github or GITHUB_ACTIONS:\n%s%s", out, errOut)
	}
}

// TestGitHubRebaseSummary: rebase appends the new index's platforms, with
// the new os.version, and verify's report to the step summary.
func TestGitHubRebaseSummary(t *testing.T) {
	reg := regtest.New(t)
	app := rebaseFixture(t, reg)
	moveBases(t, reg, winFeb)
	path, earlier := stepSummary(t)
	newTag := reg.Host() + "/app:1-feb"
	out, errOut, code := run(t, "rebase", app, "-t", newTag, "--github")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	sum := readSummary(t, path, earlier)
	for _, want := range []string{
		"### imgctl rebase `" + app + "` → `" + newTag + "`",
		"Pushed `" + newTag + "` at `sha256:",
		"**PASSED**",
		"| windows/amd64 | " + winFeb + " | ltsc2025 | `sha256:",
		"| linux/arm64",
		"| 26100 | 26100 | containerd | `sha256:",
		"No findings.",
	} {
		if !strings.Contains(sum, want) {
			t.Errorf("step summary lacks %q:\n%s", want, sum)
		}
	}
	if strings.Contains(sum, "| "+winJan+" |") {
		t.Errorf("the platform table shows the old os.version %s:\n%s", winJan, sum)
	}
}

// TestGitHubPromoteSummary: promote appends the promotion, the source's
// platforms and the gate's report; a refused promotion says so.
func TestGitHubPromoteSummary(t *testing.T) {
	reg := regtest.New(t)
	src := push(t, reg, "ci/app:1", regtest.Must(regtest.MultiOSIndex())(t))
	path, earlier := stepSummary(t)
	dst := reg.Host() + "/release/app:1"
	out, errOut, code := run(t, "promote", src, dst, "--github")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	sum := readSummary(t, path, earlier)
	for _, want := range []string{"### imgctl promote `" + reg.Host() + "/ci/app@sha256:", "→ `" + dst + "`", "Promoted ",
		"**PASSED**", "| windows/amd64 | 10.0.20348.", "| ltsc2022 |", "| platform | os.version | LTSC | digest |"} {
		if !strings.Contains(sum, want) {
			t.Errorf("step summary lacks %q:\n%s", want, sum)
		}
	}
	refused := reg.Host() + "/release/app:2"
	strict := writePolicy(t, "requirePlatforms: [windows/amd64:10.0.17763]\n")
	out, errOut, code = run(t, "promote", src, refused, "--github", "--policy", strict)
	if code != ExitFailed {
		t.Fatalf("refused promotion: exit %d, want 1\n%s%s", code, out, errOut)
	}
	if anns := annotations(out); len(anns) != 1 || !strings.HasPrefix(anns[0], "::error title="+verify.RuleMissingPlatform+"::") {
		t.Errorf("annotations of the refusal: %q", anns)
	}
	sum2 := strings.TrimPrefix(readSummary(t, path, earlier), sum)
	for _, want := range []string{"Refused: `" + refused + "` is not tagged.", "**FAILED**: 1 error(s)", "| `" + verify.RuleMissingPlatform + "` | error |"} {
		if !strings.Contains(sum2, want) {
			t.Errorf("step summary of the refusal lacks %q:\n%s", want, sum2)
		}
	}
}

// TestCIFindingText: one adapter words every check's findings: the
// subject (an index entry's platform and short digest, a Dockerfile
// instruction's target platform, a manifest's object and container) in
// front of the message, and the location of those with a file.
func TestCIFindingText(t *testing.T) {
	t.Setenv(ghactions.EnvWorkspace, "/ws")
	d := "sha256:" + strings.Repeat("ab", 32)
	for _, tc := range []struct {
		name     string
		f        findings.Finding
		message  string
		location string
	}{
		{"verify", findings.Finding{Rule: "r", Severity: findings.Error, Digest: d, Platform: "windows/amd64", Message: "m"}, "windows/amd64 " + d[:19] + ": m", ""},
		{"verify, digest only", findings.Finding{Rule: "r", Severity: findings.Warning, Digest: d, Message: "m"}, d[:19] + ": m", ""},
		{"verify, index", findings.Finding{Rule: "r", Severity: findings.Error, Message: "m"}, "m", ""},
		{"lint", findings.Finding{Rule: "r", Severity: findings.Error, File: "/ws/Dockerfile", Line: 2, Platform: "windows/amd64", Stage: "s", Message: "m"}, "windows/amd64: m", "Dockerfile:2"},
		{"lint, every platform", findings.Finding{Rule: "r", Severity: findings.Error, File: "/ws/a/Dockerfile", Line: 3, Stage: "s", Message: "m"}, "m", "a/Dockerfile:3"},
		{"workload, pod", findings.Finding{Rule: "r", Severity: findings.Warning, File: "-", Line: 4, Object: "Pod/p", Message: "m"}, "Pod/p: m", ""},
		{"workload, container", findings.Finding{Rule: "r", Severity: findings.Error, File: "/ws/w.yaml", Line: 5, Object: "Pod/p", Container: "c", Message: "m"}, "Pod/p container c: m", "w.yaml:5"},
	} {
		row := summaryRow(tc.f)
		if got := ciMessage(tc.f); got != tc.message || row[2] != tc.message || row[3] != tc.location || row[1] != string(tc.f.Severity) {
			t.Errorf("%s: message %q, row %q; want %q at %q", tc.name, got, row, tc.message, tc.location)
		}
		if a := annotation(tc.f); a.Message != tc.message || a.Title != tc.f.Rule || a.Level != annotationLevel(tc.f.Severity) {
			t.Errorf("%s: annotation %+v", tc.name, a)
		}
	}
}
