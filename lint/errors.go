package lint

import (
	"errors"
	"fmt"
	"strings"

	"github.com/imgctl/imgctl/findings"
)

// ErrInvalidDockerfile is returned (wrapped) when a Dockerfile cannot be parsed
// or its stages cannot be resolved.
var ErrInvalidDockerfile = errors.New("invalid Dockerfile")

// ErrTargetNotFound is returned (wrapped) when Options.Target names no stage.
var ErrTargetNotFound = errors.New("target stage not found")

// ErrFindings is returned (wrapped in an *Error) when the Dockerfile has
// preflight findings; nothing was solved.
var ErrFindings = errors.New("preflight found problems in the Dockerfile")

// Error carries the findings that stopped a build.
type Error struct {
	// Findings are the problems, sorted by line when NewError made the Error.
	Findings []findings.Finding
}

// NewError returns an *Error with findings sorted by line, then rule,
// platform, stage and message, without duplicates: the findings of several
// variants, merged. It sorts findings in place.
func NewError(fs []findings.Finding) *Error {
	return &Error{Findings: sortFindings(fs)}
}

// Error summarises the findings.
func (e *Error) Error() string {
	lines := make([]string, 0, len(e.Findings))
	for _, f := range e.Findings {
		lines = append(lines, FormatFinding(f))
	}
	return fmt.Sprintf("%v:\n%s", ErrFindings, strings.Join(lines, "\n"))
}

// Unwrap makes errors.Is(err, ErrFindings) true.
func (e *Error) Unwrap() error { return ErrFindings }
