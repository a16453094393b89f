package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/imgctl/imgctl/build"
	"github.com/imgctl/imgctl/findings"
	"github.com/imgctl/imgctl/internal/ghactions"
	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/snapshot"
	"github.com/imgctl/imgctl/verify"
)

const githubFlag = "github"

// githubOutput is what one command run writes for GitHub Actions (with
// --github, or GITHUB_ACTIONS=true): its findings as workflow annotations
// and a Markdown step summary appended to $GITHUB_STEP_SUMMARY. The zero
// value writes nothing.
type githubOutput struct {
	// on is false without --github and outside GitHub Actions.
	on bool
	// annotations receives the workflow commands, stderr the warnings.
	annotations, stderr io.Writer
	// summary is the step summary file; "" when the runner named none.
	summary string
}

// githubOutput returns the run's GitHub output. Annotations go to stdout
// after the text report; with -o json or sarif they go to stderr, which
// the runner reads for workflow commands too, so that stdout stays one
// document.
func (o *rootOptions) githubOutput(cmd *cobra.Command) githubOutput {
	if !o.github {
		return githubOutput{}
	}
	g := githubOutput{on: true, annotations: cmd.OutOrStdout(), stderr: cmd.ErrOrStderr(), summary: os.Getenv(ghactions.EnvStepSummary)}
	if o.output != "text" {
		g.annotations = cmd.ErrOrStderr()
	}
	return g
}

// annotate writes anns as workflow commands within the per-step limit.
func (g githubOutput) annotate(anns []ghactions.Annotation) {
	if !g.on || len(anns) == 0 {
		return
	}
	seeAlso := "see imgctl's output in the log"
	if g.summary != "" {
		seeAlso = "see the step summary"
	}
	if err := ghactions.Annotate(g.annotations, anns, ghactions.Options{SeeAlso: seeAlso}); err != nil {
		g.warn("annotations", err)
	}
}

// appendSummary appends markdown to the step summary. A summary that
// cannot be written is a warning on stderr: it never changes the exit
// code of the check.
func (g githubOutput) appendSummary(markdown string) {
	if !g.on || g.summary == "" {
		return
	}
	if err := ghactions.AppendSummary(g.summary, markdown); err != nil {
		g.warn("step summary", err)
	}
}

func (g githubOutput) warn(what string, err error) {
	fmt.Fprintf(g.stderr, "imgctl: warning: GitHub %s: %v\n", what, err)
}

// The CI adapter: one set of functions turns findings (of lint,
// check-workload and verify, and the lint and verify findings of build,
// rebase and promote) into GitHub annotations, step-summary rows and
// SARIF results (writeSARIF), and words them in the text reports.

// subject names what a finding is about: the platform and short digest of
// an index entry (verify, policy, sign, kube's nodes), the target platform
// of a Dockerfile instruction (lint), the object and container of a
// manifest (check-workload); "" for none.
func subject(f findings.Finding) string {
	var parts []string
	for _, p := range []string{f.Platform, shortDigest(f.Digest), f.Object} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if f.Container != "" {
		parts = append(parts, "container "+f.Container)
	}
	return strings.Join(parts, " ")
}

// ciMessage is the finding's message with its subject in front, as
// annotations, summary rows and SARIF results show it.
func ciMessage(f findings.Finding) string {
	if s := subject(f); s != "" {
		return s + ": " + f.Message
	}
	return f.Message
}

// annotation is a finding as a workflow command at its file (relative to
// the workspace; none for an index, which has no file) and line.
func annotation(f findings.Finding) ghactions.Annotation {
	return ghactions.Annotation{Level: annotationLevel(f.Severity), File: workspacePath(f.File), Line: f.Line, Title: f.Rule, Message: ciMessage(f)}
}

// summaryRow is a finding as a row of the step summary's findings table:
// rule, severity, message, location.
func summaryRow(f findings.Finding) []string {
	return []string{code(f.Rule), string(f.Severity), ciMessage(f), fileLine(workspacePath(f.File), f.Line)}
}

// verdict is a summary's verdict line over findings.
func verdict(passed bool, fs []findings.Finding) string {
	return status(passed, findings.Count(fs, findings.Error), len(fs))
}

// findingsSection annotates fs at their file and line and returns the
// summary's findings section.
func (g githubOutput) findingsSection(fs []findings.Finding) string {
	anns := make([]ghactions.Annotation, 0, len(fs))
	rows := make([][]string, 0, len(fs))
	for _, f := range fs {
		anns = append(anns, annotation(f))
		rows = append(rows, summaryRow(f))
	}
	g.annotate(anns)
	if len(rows) == 0 {
		return "No findings.\n\n"
	}
	return ghactions.Table([]string{"rule", "severity", "message", "location"}, rows)
}

// checked reports the findings of a check of files (lint, check-workload):
// annotations at their file and line, and a summary section with title,
// the verdict and the findings table.
func (g githubOutput) checked(title string, passed bool, fs []findings.Finding) {
	if !g.on {
		return
	}
	g.appendSummary("### " + title + "\n\n" + verdict(passed, fs) + g.findingsSection(fs))
}

// lint reports Dockerfile findings (lint, build): every one fails.
func (g githubOutput) lint(file string, fs []findings.Finding) {
	g.checked("imgctl lint "+code(workspacePath(file)), len(fs) == 0, fs)
}

// verified reports what verify found about an index that build, verify,
// rebase or promote read or wrote: annotations of the findings (an index
// has no file and line), and a summary section with title, the notes,
// the platform table (platform, os.version, its LTSC, digest), the
// variant each engine selects on each Windows target, and the findings.
// rep is nil when nothing was verified.
func (g githubOutput) verified(title string, rows []row, rep *verify.Report, notes ...string) {
	if !g.on {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### %s\n\n", title)
	for _, n := range notes {
		b.WriteString(n + "\n\n")
	}
	if rep != nil {
		b.WriteString(verdict(rep.Passed, rep.Findings))
	}
	if len(rows) > 0 {
		var cells [][]string
		for _, r := range rows {
			cells = append(cells, []string{r.platform, r.osVersion, r.ltsc, code(r.digest)})
		}
		b.WriteString(ghactions.Table([]string{"platform", "os.version", "LTSC", "digest"}, cells))
	}
	if rep == nil {
		g.appendSummary(b.String())
		return
	}
	if len(rep.Targets) > 0 {
		var cells [][]string
		for _, t := range rep.Targets {
			sel, ltsc := "(nothing)", "-"
			if t.Selected != "" {
				sel = code(shortDigest(t.Selected))
				if n := platform.ReleaseName(t.OSVersion); n != "" {
					ltsc = n
				}
			}
			cells = append(cells, []string{t.Target, strconv.FormatUint(uint64(t.Build), 10), t.Engine, sel, t.OSVersion, ltsc})
		}
		b.WriteString("Windows targets: the variant each engine selects\n\n")
		b.WriteString(ghactions.Table([]string{"target", "build", "engine", "selects", "os.version", "LTSC"}, cells))
	}
	b.WriteString(g.findingsSection(rep.Findings))
	g.appendSummary(b.String())
}

// snapshotRows are the platform rows of an index's images, attestation
// manifests left out.
func snapshotRows(s *snapshot.Snapshot) []row {
	if s == nil {
		return nil
	}
	var out []row
	for _, e := range s.Entries {
		if !e.IsAttestation() {
			out = append(out, newRow(e.Platform(), "", e.Descriptor))
		}
	}
	return out
}

// metadataRows are the platform rows of a build's images.
func metadataRows(m build.Metadata) []row {
	var out []row
	for _, p := range m.Platforms {
		r := row{platform: p.Platform, osVersion: p.OSVersion, ltsc: platform.ReleaseName(p.OSVersion), digest: p.Digest}
		if r.osVersion == "" {
			r.osVersion = "-"
		}
		if r.ltsc == "" {
			r.ltsc = "-"
		}
		out = append(out, r)
	}
	return out
}

// status is a summary's verdict line.
func status(passed bool, errors, findings int) string {
	s := "**PASSED**"
	if !passed {
		s = "**FAILED**"
	}
	return fmt.Sprintf("%s: %d error(s), %d finding(s)\n\n", s, errors, findings)
}

// annotationLevel maps a finding's severity to the workflow command.
func annotationLevel(s findings.Severity) ghactions.Level {
	switch s {
	case findings.Error:
		return ghactions.Error
	case findings.Warning:
		return ghactions.Warning
	}
	return ghactions.Notice
}

// workspacePath names a finding's file as GitHub and SARIF want it: relative
// to the repository ($GITHUB_WORKSPACE, else the working directory), with
// forward slashes. A file outside it is left as given; "-" (stdin) is no
// file.
func workspacePath(file string) string {
	if file == "" || file == "-" {
		return ""
	}
	base := os.Getenv(ghactions.EnvWorkspace)
	if base == "" {
		base, _ = os.Getwd()
	}
	abs, err := filepath.Abs(file)
	if err != nil || base == "" {
		return filepath.ToSlash(file)
	}
	rel, err := filepath.Rel(base, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(file)
	}
	return filepath.ToSlash(rel)
}

func fileLine(file string, line int) string {
	if file == "" || line <= 0 {
		return file
	}
	return fmt.Sprintf("%s:%d", file, line)
}

// code puts s in a Markdown code span, or "-" when empty.
func code(s string) string {
	if s == "" {
		return "-"
	}
	return "`" + s + "`"
}
