package workflows

import (
	"fmt"
	"io"
	"os/exec"

	"github.com/rhysd/actionlint"
)

// Shellcheck is the shellcheck executable actionlint runs on every run:
// script, or "" when it is not on the PATH (it is optional: CI has none).
func Shellcheck() string {
	p, err := exec.LookPath("shellcheck")
	if err != nil {
		return ""
	}
	return p
}

// newLinter returns an actionlint linter that prints nothing (callers
// report the errors) and runs shellcheck when there is one, and the
// project of the repository at root: its actionlint config and the local
// actions (`uses: ./`) it resolves.
func newLinter(root string) (*actionlint.Linter, *actionlint.Project, error) {
	proj, err := actionlint.NewProject(root)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the actionlint project at %s: %w", root, err)
	}
	l, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{Shellcheck: Shellcheck()})
	if err != nil {
		return nil, nil, err
	}
	return l, proj, nil
}

// Lint lints workflow files with actionlint as part of the repository at
// root (the directory holding .github/workflows), so that each `uses: ./`
// is checked against root's action.yml: its inputs, required inputs and
// runs section.
func Lint(root string, files ...string) ([]*actionlint.Error, error) {
	l, proj, err := newLinter(root)
	if err != nil {
		return nil, err
	}
	errs, err := l.LintFiles(files, proj)
	if err != nil {
		return nil, fmt.Errorf("linting %v: %w", files, err)
	}
	return errs, nil
}

// LintContent lints one workflow given as bytes, reported under path, as
// part of the repository at root. It lints example workflows with their
// `uses: OWNER/REPO@REF` of the action replaced by `uses: ./`, so that
// their inputs are checked against root's action.yml.
func LintContent(root, path string, content []byte) ([]*actionlint.Error, error) {
	l, proj, err := newLinter(root)
	if err != nil {
		return nil, err
	}
	errs, err := l.Lint(path, content, proj)
	if err != nil {
		return nil, fmt.Errorf("linting %s: %w", path, err)
	}
	return errs, nil
}
