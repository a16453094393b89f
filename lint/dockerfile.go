package lint

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1"
	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"

	"github.com/imgctl/imgctl/findings"
)

// dockerfile is a Dockerfile parsed once for Preflight and FinalBases.
type dockerfile struct {
	escape   rune
	findings []findings.Finding // invalid exec forms, found while parsing
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
	fs, skip := execFormFindings(res.AST, file)
	stages, metaArgs, err := parseInstructions(res.AST, skip)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidDockerfile, file, err)
	}
	return &dockerfile{escape: res.EscapeToken, findings: fs, skip: skip, stages: stages, metaArgs: metaArgs}, nil
}

// targets returns the platforms to check: opts', or the build platform as
// BuildKit defaults.
func (d *dockerfile) targets(opts Options) []v1.Platform {
	if len(opts.Platforms) == 0 {
		return []v1.Platform{buildPlatform}
	}
	return opts.Platforms
}

// resolve builds the stage graph for one target platform.
func (d *dockerfile) resolve(p v1.Platform, opts Options) (*stageGraph, error) {
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

// isCommand tells whether the parser node is one of the named instructions.
func isCommand(n *parser.Node, names ...string) bool {
	for _, name := range names {
		if strings.EqualFold(n.Value, name) {
			return true
		}
	}
	return false
}

// startLine is the first line of a parsed instruction, 0 when it has no location.
func startLine(loc []parser.Range) int {
	if len(loc) == 0 {
		return 0
	}
	return loc[0].Start.Line
}
