package lint

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/imgctl/imgctl/findings"
)

// Preflight rule names, as they appear in findings.Finding.Rule.
const (
	// RuleRunInWindowsStage: a RUN in a stage that runs on Windows, which a
	// Linux builder cannot execute.
	RuleRunInWindowsStage = "run-in-windows-stage"
	// RuleInvalidExecForm: an instruction that looks like exec form but is
	// not a valid JSON string array, so it would run through a shell.
	RuleInvalidExecForm = "invalid-exec-form"
	// RuleShellFormEntrypoint: a shell-form ENTRYPOINT or CMD in a Windows
	// stage.
	RuleShellFormEntrypoint = "shell-form-entrypoint"
	// RuleWindowsBaseRelease: a Windows stage whose base cannot give the
	// Windows release being built: a FROM that does not use WindowsBaseArg
	// while several releases are built, a tag that names another release,
	// or (with Options.Resolve) a base that offers no variant of the
	// release's build.
	RuleWindowsBaseRelease = "windows-base-release"
	// RuleLinkInWindowsStage: a COPY --link or ADD --link in a stage whose
	// filesystem becomes a Windows image. BuildKit writes a layer in the
	// Windows layout (Files/, Hives/) only when its parent chain comes from
	// a pulled Windows image; a --link layer has no parent, so its files
	// would not appear under C:\.
	RuleLinkInWindowsStage = "link-in-windows-stage"
)

// lint's findings are findings.Finding, with Rule, Severity (always
// findings.Error), File (the Dockerfile as the caller named it), Line (the
// first line of the instruction, from 1), Stage (as BuildKit names it),
// Message, and Platform: the target platform the finding holds for, ""
// when it holds for every platform (an invalid exec form).

// FormatFinding formats a finding as "file:line: [rule] message".
func FormatFinding(f findings.Finding) string {
	return fmt.Sprintf("%s:%d: [%s] %s", f.File, f.Line, f.Rule, f.Message)
}

// sortFindings orders findings by line, then rule, platform, stage and
// message, and drops duplicates (the same finding from two variants). It
// sorts in place and returns the shortened slice.
func sortFindings(fs []findings.Finding) []findings.Finding {
	slices.SortFunc(fs, compareFindings)
	return slices.CompactFunc(fs, func(a, b findings.Finding) bool { return a == b })
}

func compareFindings(a, b findings.Finding) int {
	return cmp.Or(
		cmp.Compare(a.Line, b.Line),
		cmp.Compare(a.Rule, b.Rule),
		cmp.Compare(a.Platform, b.Platform),
		cmp.Compare(a.Stage, b.Stage),
		cmp.Compare(a.Message, b.Message),
	)
}
