package build

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
)

// Preflight rule names, as they appear in Finding.Rule.
const (
	RuleRunInWindowsStage   = "run-in-windows-stage"
	RuleInvalidExecForm     = "invalid-exec-form"
	RuleShellFormEntrypoint = "shell-form-entrypoint"
)

// SeverityError marks a finding that makes the build fail or produce a broken image.
const SeverityError = "error"

// ErrInvalidDockerfile is returned (wrapped) when a Dockerfile cannot be parsed
// or its stages cannot be resolved.
var ErrInvalidDockerfile = errors.New("invalid Dockerfile")

// Finding is one problem found in a Dockerfile.
type Finding struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	Platform string `json:"platform,omitempty"`
	Stage    string `json:"stage,omitempty"`
	Message  string `json:"message"`
}

// String formats the finding as "file:line: [rule] message".
func (f Finding) String() string {
	return fmt.Sprintf("%s:%d: [%s] %s", f.File, f.Line, f.Rule, f.Message)
}

// PreflightOptions select what Preflight checks the Dockerfile for.
type PreflightOptions struct {
	// Platforms are the target platforms; empty means the build platform, linux/amd64.
	Platforms []v1.Platform
	// BuildArgs override ARG defaults, as --build-arg does.
	BuildArgs map[string]string
	// Target is the stage to build; empty means the last stage.
	Target string
}

// Preflight parses a Dockerfile with BuildKit's parser, resolves the stage graph
// for every target platform the way BuildKit does, and reports the problems that
// would break a multi-OS build on a Linux builder. file names the Dockerfile in
// findings and errors. Findings are sorted by line.
func Preflight(r io.Reader, file string, opts PreflightOptions) ([]Finding, error) {
	dt, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	df, err := parseDockerfile(dt, file)
	if err != nil {
		return nil, err
	}
	findings := df.findings
	for _, p := range df.targets(opts) {
		g, err := df.resolve(p, opts)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrInvalidDockerfile, file, err)
		}
		findings = append(findings, windowsStageFindings(g, file, p, df.skip)...)
	}
	slices.SortFunc(findings, compareFindings)
	return slices.CompactFunc(findings, func(a, b Finding) bool { return a == b }), nil
}

// dockerfile is a Dockerfile parsed once for Preflight and FinalBases.
type dockerfile struct {
	escape   rune
	findings []Finding // invalid exec forms, found while parsing
	skip     map[*parser.Node]bool
	stages   []instructions.Stage
	metaArgs []instructions.ArgCommand
}

// parseDockerfile parses with BuildKit's parser and instructions, skipping
// the instructions whose exec form is invalid (they are findings instead).
func parseDockerfile(dt []byte, file string) (*dockerfile, error) {
	res, err := parser.Parse(bytes.NewReader(dt))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidDockerfile, file, err)
	}
	findings, skip := execFormFindings(res.AST, file)
	stages, metaArgs, err := parseInstructions(res.AST, skip)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidDockerfile, file, err)
	}
	return &dockerfile{escape: res.EscapeToken, findings: findings, skip: skip, stages: stages, metaArgs: metaArgs}, nil
}

// targets returns the platforms to check: opts', or the build platform as
// BuildKit defaults.
func (d *dockerfile) targets(opts PreflightOptions) []v1.Platform {
	if len(opts.Platforms) == 0 {
		return []v1.Platform{buildPlatform}
	}
	return opts.Platforms
}

// resolve builds the stage graph for one target platform.
func (d *dockerfile) resolve(p v1.Platform, opts PreflightOptions) (*stageGraph, error) {
	return resolveStages(d.stages, d.metaArgs, d.escape, p, opts)
}

// parseInstructions is instructions.Parse, except that it leaves out the nodes
// in skip (SHELL lines that failed as exec form and that BuildKit would reject).
func parseInstructions(ast *parser.Node, skip map[*parser.Node]bool) ([]instructions.Stage, []instructions.ArgCommand, error) {
	filtered := &parser.Node{StartLine: ast.StartLine, EndLine: ast.EndLine}
	for _, n := range ast.Children {
		if !skip[n] || !isCommand(n, "shell") {
			filtered.Children = append(filtered.Children, n)
		}
	}
	stages, metaArgs, err := instructions.Parse(filtered, nil)
	if err != nil {
		return nil, nil, err
	}
	if len(stages) == 0 {
		return nil, nil, errors.New("no FROM instruction")
	}
	return stages, metaArgs, nil
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
