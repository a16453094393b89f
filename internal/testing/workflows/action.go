package workflows

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rhysd/actionlint"
	"go.yaml.in/yaml/v4"
)

// ActionFile is the composite action's metadata file, at the repository root.
const ActionFile = "action.yml"

// compositeAction is the part of action.yml that LintAction reads beyond
// actionlint's ActionMetadata, as YAML nodes for their lines: the outputs
// (name: {description, value}) and the steps.
type compositeAction struct {
	Outputs yaml.Node `yaml:"outputs"`
	Runs    struct {
		Steps yaml.Node `yaml:"steps"`
	} `yaml:"runs"`
}

// LintAction checks the composite action at root/action.yml. actionlint
// parses its metadata (ActionMetadata, the parser behind its `uses: ./`
// checks) and checks the runs section the way it checks a local action a
// workflow uses. It lints workflows, not actions, so the steps are then
// linted as the one job of a reusable workflow whose inputs and outputs
// are the action's: expressions, contexts (inputs, steps, github), step
// ids, the actions the steps use and, when shellcheck is on the PATH, the
// scripts. That workflow keeps each step on its line of action.yml, so the
// errors point into action.yml. Composite steps must name their shell,
// which workflows need not: that is checked here.
func LintAction(root string) ([]*actionlint.Error, error) {
	path := filepath.Join(root, ActionFile)
	l, proj, err := newLinter(root)
	if err != nil {
		return nil, err
	}
	meta, _, err := actionlint.NewLocalActionsCache(proj, nil).FindMetadata("./")
	if err != nil {
		return nil, err
	}
	if meta == nil {
		return nil, fmt.Errorf("no %s in %s", ActionFile, root)
	}
	if meta.Runs.Using != "composite" {
		return []*actionlint.Error{{Filepath: path, Line: 1, Column: 1, Kind: "action",
			Message: fmt.Sprintf("runs.using is %q, want composite", meta.Runs.Using)}}, nil
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var ca compositeAction
	if err := yaml.Unmarshal(src, &ca); err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	var errs []*actionlint.Error
	for _, step := range ca.Runs.Steps.Content {
		if mapValue(step, "run") != nil && mapValue(step, "shell") == nil {
			errs = append(errs, &actionlint.Error{Filepath: path, Line: step.Line, Column: step.Column, Kind: "action",
				Message: `a run step of a composite action must name its shell ("shell: bash")`})
		}
	}
	wf, err := asWorkflow(src, meta, ca)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	more, err := l.Lint(path, wf, proj)
	if err != nil {
		return nil, fmt.Errorf("linting the steps of %s: %w", path, err)
	}
	return append(errs, more...), nil
}

// asWorkflow writes the action as a reusable workflow (on: workflow_call)
// with one job that keeps every line of action.yml that actionlint judges
// on its line: the steps verbatim, and each output's value as the job's
// output of that name. The action's inputs become the workflow's string
// inputs, on line 2 in JSON (YAML's flow style); the other lines before
// the steps, which action.yml's inputs and outputs fill, are blank.
func asWorkflow(src []byte, meta *actionlint.ActionMetadata, ca compositeAction) ([]byte, error) {
	steps := ca.Runs.Steps
	if steps.Kind != yaml.SequenceNode || len(steps.Content) == 0 {
		return nil, fmt.Errorf("runs.steps is not a list of steps")
	}
	first := steps.Content[0].Line // the first step's line, 1-based
	indent := steps.Column - 1     // the column of its "-"
	if indent < 2 {
		return nil, fmt.Errorf("runs.steps must be indented")
	}
	inputs, outputs := map[string]any{}, map[string]any{}
	for _, in := range meta.Inputs {
		inputs[in.Name] = map[string]any{"type": "string", "required": in.Required}
	}
	const header = 6 // the lines up to the job's "outputs:"
	// The job's keys, steps among them, at the steps' indentation: a block
	// sequence may sit at its key's indentation.
	job := strings.Repeat(" ", indent)
	out := make([]string, first-1)
	if len(out) < header+1 {
		return nil, fmt.Errorf("runs.steps starts on line %d: too early to keep the steps on their lines", first)
	}
	last := header
	for i := 0; i+1 < len(ca.Outputs.Content); i += 2 {
		name, value := ca.Outputs.Content[i].Value, mapValue(ca.Outputs.Content[i+1], "value")
		if value == nil {
			continue // no value: actionlint's metadata check reports it
		}
		if value.Line <= last || value.Line >= first-1 {
			return nil, fmt.Errorf("output %q: its value on line %d is out of the order this check needs", name, value.Line)
		}
		last = value.Line
		q, err := json.Marshal(value.Value)
		if err != nil {
			return nil, err
		}
		out[value.Line-1] = job + "  " + name + ": " + string(q)
		outputs[name] = map[string]string{"value": "${{ jobs.action.outputs." + name + " }}"}
	}
	on, err := json.Marshal(map[string]any{"workflow_call": map[string]any{"inputs": inputs, "outputs": outputs}})
	if err != nil {
		return nil, err
	}
	copy(out, []string{
		"name: " + ActionFile,
		"on: " + string(on),
		"jobs:",
		strings.Repeat(" ", indent/2) + "action:",
		job + "runs-on: ubuntu-latest",
		job + "outputs:",
	})
	if len(outputs) == 0 {
		out[header-1] = job + "outputs: {}"
	}
	out[first-2] = job + "steps:"
	// The steps run until the first line indented less than a step.
	for _, line := range strings.Split(string(src), "\n")[first-1:] {
		if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") && len(line)-len(strings.TrimLeft(line, " ")) < indent {
			break
		}
		out = append(out, line)
	}
	return []byte(strings.Join(out, "\n") + "\n"), nil
}

// mapValue returns the value of key k in the mapping node n, or nil.
func mapValue(n *yaml.Node, k string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == k {
			return n.Content[i+1]
		}
	}
	return nil
}
