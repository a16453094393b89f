package lint

import (
	"cmp"
	"fmt"
	"slices"
)

// Preflight rule names, as they appear in Finding.Rule.
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

// SeverityError marks a finding that makes the build fail or produce a broken image.
const SeverityError = "error"

// Finding is one problem found in a Dockerfile.
type Finding struct {
	// Rule names the check, one of the Rule constants.
	Rule string `json:"rule"`
	// Severity is SeverityError.
	Severity string `json:"severity"`
	// File is the Dockerfile as the caller named it.
	File string `json:"file"`
	// Line is the first line of the instruction.
	Line int `json:"line"`
	// Platform is the target platform the finding holds for; empty when it
	// holds for every platform (an invalid exec form).
	Platform string `json:"platform,omitempty"`
	// Stage is the stage of the instruction, as BuildKit names it.
	Stage string `json:"stage,omitempty"`
	// Message says what is wrong and how to fix it.
	Message string `json:"message"`
}

// String formats the finding as "file:line: [rule] message".
func (f Finding) String() string {
	return fmt.Sprintf("%s:%d: [%s] %s", f.File, f.Line, f.Rule, f.Message)
}

// sortFindings orders findings by line, then rule, platform, stage and
// message, and drops duplicates (the same finding from two variants). It
// sorts in place and returns the shortened slice.
func sortFindings(findings []Finding) []Finding {
	slices.SortFunc(findings, compareFindings)
	return slices.CompactFunc(findings, func(a, b Finding) bool { return a == b })
}

func compareFindings(a, b Finding) int {
	return cmp.Or(
		cmp.Compare(a.Line, b.Line),
		cmp.Compare(a.Rule, b.Rule),
		cmp.Compare(a.Platform, b.Platform),
		cmp.Compare(a.Stage, b.Stage),
		cmp.Compare(a.Message, b.Message),
	)
}
