// Package ghactions writes what GitHub Actions reads from a step: workflow
// commands that annotate files and lines (::error file=F,line=N::...),
// within the number of annotations the runner shows per step, and the
// Markdown step summary (the file GITHUB_STEP_SUMMARY names). It knows
// nothing of imgctl's findings: the CLI turns them into Annotations and
// Markdown.
//
// No Go library for workflow commands is served to this project (the
// one that exists, github.com/sethvargo/go-githubactions, is not), so the
// escaping here follows @actions/core's escapeData and escapeProperty, and
// the table test pins it.
package ghactions

// Environment variables the runner sets.
const (
	// EnvActions is "true" in every step GitHub Actions runs.
	EnvActions = "GITHUB_ACTIONS"
	// EnvStepSummary names the file a step appends its Markdown summary to.
	EnvStepSummary = "GITHUB_STEP_SUMMARY"
	// EnvWorkspace is the checkout: annotations name files relative to it.
	EnvWorkspace = "GITHUB_WORKSPACE"
)

// InActions reports whether getenv (os.Getenv) says the process runs in a
// GitHub Actions step.
func InActions(getenv func(string) string) bool {
	return getenv(EnvActions) == "true"
}
