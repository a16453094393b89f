package cli

import (
	"fmt"
	"io"
	"net/url"

	"github.com/owenrumney/go-sarif/v2/sarif"
	"github.com/spf13/cobra"

	"github.com/imgctl/imgctl/findings"
	"github.com/imgctl/imgctl/kube"
	"github.com/imgctl/imgctl/lint"
	"github.com/imgctl/imgctl/policy"
)

// outputSARIF is the -o value for a SARIF 2.1.0 log.
const outputSARIF = "sarif"

// sarifCapable marks, in a command's Annotations, the verbs that print
// -o sarif: lint and check-workload, whose findings have a file and line,
// and verify, whose findings name a manifest digest and platform.
const sarifCapable = "imgctl/output-sarif"

// informationURI is imgctl's home page in the log's tool.driver.
const informationURI = "https://github.com/imgctl/imgctl"

// lintRules and workloadRules are the rules a SARIF log of lint and
// check-workload declares, with their short descriptions (the README's
// rule tables).
var (
	lintRules = []sarifRule{
		{lint.RuleRunInWindowsStage, "a RUN in a stage that runs on Windows: a Linux builder cannot execute it"},
		{lint.RuleInvalidExecForm, "an exec-form instruction that is not a JSON string array: BuildKit would run it through a shell"},
		{lint.RuleShellFormEntrypoint, "a shell-form ENTRYPOINT or CMD in a Windows stage"},
		{lint.RuleWindowsBaseRelease, "a Windows stage whose base cannot give the Windows release being built"},
		{lint.RuleLinkInWindowsStage, "a COPY --link or ADD --link in a stage that becomes a Windows image: the layer misses the Windows layout"},
	}
	workloadRules = []sarifRule{
		{kube.RuleWindowsForbiddenField, "a field the API server rejects in a pod with spec.os.name: windows"},
		{kube.RuleRunAsNonRootAdministrator, "runAsNonRoot with the user ContainerAdministrator, which kubelet refuses to start"},
		{kube.RuleRuntimeClassNoVariant, "the Windows build a RuntimeClass selects has no variant in the image index"},
		{kube.RuleMissingWindowsToleration, "a Windows pod that does not tolerate the Windows node taint"},
		{kube.RuleNoMemoryLimit, "a container on Windows without a memory limit"},
		{kube.RuleExecProbeDefaultTimeout, "an exec probe on Windows with the default one-second timeout"},
		{kube.RulePreStopNeedsShell, "a preStop exec hook that runs a shell Windows images do not have"},
	}
)

// verifyRules are the rules a SARIF log of verify declares up front: the
// patch-level rules of a policy's patchLevel section. Any other rule a
// finding names is declared as it is met (sarifResult).
var verifyRules = []sarifRule{
	{policy.RuleBaseBehind, "a Windows variant's base revision is behind its build's newest (or its patch level cannot be told)"},
	{policy.RuleBaseOutOfSupport, "a Windows variant's release has left extended support"},
	{policy.RuleBaseExtendedSupport, "a Windows variant's release is in extended support: security updates only"},
}

// sarifRule is a rule id and its one-line description.
type sarifRule struct{ id, description string }

// checkOutput rejects an -o value the command cannot print: sarif is for
// the verbs marked sarifCapable only.
func checkOutput(cmd *cobra.Command, output string) error {
	switch output {
	case "text", "json":
		return nil
	case outputSARIF:
		if cmd.Annotations[sarifCapable] == "true" {
			return nil
		}
		return fmt.Errorf("%w: --output sarif is for lint, check-workload and verify, not %s", ErrUsage, cmd.Name())
	}
	return fmt.Errorf("%w: --output must be text or json (sarif for lint, check-workload and verify), not %q", ErrUsage, output)
}

// writeSARIF prints a SARIF 2.1.0 log of one run: tool.driver imgctl with
// imgctl version's version, every rule of the verb, and each finding as a
// result (sarifResult).
func writeSARIF(w io.Writer, rules []sarifRule, fs []findings.Finding) error {
	log, err := sarif.New(sarif.Version210)
	if err != nil {
		return err
	}
	run := sarif.NewRunWithInformationURI("imgctl", informationURI)
	if v, err := readVersionInfo(); err == nil && v.Version != "" {
		run.Tool.Driver.Version = &v.Version
	}
	for _, r := range rules {
		run.AddRule(r.id).WithShortDescription(sarif.NewMultiformatMessageString(r.description))
	}
	for _, f := range fs {
		sarifResult(run, f)
	}
	log.AddRun(run)
	return writeJSON(w, log)
}

// sarifResult adds f to run as a result of its rule, with the message
// annotations show and its file (relative to the repository) and line.
func sarifResult(run *sarif.Run, f findings.Finding) {
	if r := run.AddRule(f.Rule); r.ShortDescription == nil {
		// A rule the list lacks still gets its index, and a description:
		// the schema requires one.
		r.WithShortDescription(sarif.NewMultiformatMessageString(f.Rule))
	}
	res := run.CreateResultForRule(f.Rule).WithLevel(sarifLevel(f.Severity)).WithMessage(sarif.NewTextMessage(ciMessage(f)))
	if path := workspacePath(f.File); path != "" {
		// A URI reference: spaces and the like percent-encoded.
		uri := (&url.URL{Path: path}).String()
		loc := sarif.NewPhysicalLocation().WithArtifactLocation(sarif.NewSimpleArtifactLocation(uri))
		if f.Line > 0 {
			loc.WithRegion(sarif.NewSimpleRegion(f.Line, f.Line))
		}
		res.AddLocation(sarif.NewLocationWithPhysicalLocation(loc))
	}
	if f.File == "" && f.Digest != "" {
		// An index entry: a logical location, the platform by its digest.
		ll := sarif.NewLogicalLocation().WithFullyQualifiedName(f.Digest).WithKind("module")
		if f.Platform != "" {
			ll.WithName(f.Platform)
		}
		res.AddLocation(sarif.NewLocation().WithLogicalLocations([]*sarif.LogicalLocation{ll}))
	}
}

// sarifLevel maps a severity to a result level: error, warning, or note.
func sarifLevel(s findings.Severity) string {
	switch s {
	case findings.Error, findings.Warning:
		return string(s)
	}
	return "note"
}
