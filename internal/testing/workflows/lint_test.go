package workflows

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
)

// repoRoot is imgctl's repository root, two directories up.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, ActionFile)); err != nil {
		t.Fatalf("no %s at the repository root: %v", ActionFile, err)
	}
	return root
}

// glob returns the files matching pattern under root, at least one.
func glob(t *testing.T, root, pattern string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, pattern))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no files match %s", pattern)
	}
	return files
}

func reportErrors(t *testing.T, errs []*actionlint.Error) {
	t.Helper()
	for _, e := range errs {
		t.Errorf("%s", e)
	}
}

func TestRepositoryWorkflowsLint(t *testing.T) {
	root := repoRoot(t)
	files := glob(t, root, ".github/workflows/*.yml")
	errs, err := Lint(root, files...)
	if err != nil {
		t.Fatal(err)
	}
	reportErrors(t, errs)
	t.Logf("linted %d workflows (shellcheck: %q)", len(files), Shellcheck())
}

// TestActionLints lints action.yml, and, where shellcheck is installed
// (CI has none), the scripts its steps run.
func TestActionLints(t *testing.T) {
	root := repoRoot(t)
	errs, err := LintAction(root)
	if err != nil {
		t.Fatal(err)
	}
	reportErrors(t, errs)
	sc := Shellcheck()
	if sc == "" {
		t.Log("shellcheck is not installed: scripts/action/*.sh not shellchecked")
		return
	}
	out, err := exec.Command(sc, glob(t, root, "scripts/action/*.sh")...).CombinedOutput()
	if err != nil {
		t.Errorf("shellcheck scripts/action: %v\n%s", err, out)
	}
}

// actionRef is how the examples name imgctl's action: imgctl/imgctl@REF.
var actionRef = regexp.MustCompile(`(?m)^(\s*(?:-\s+)?uses:\s+)imgctl/imgctl@\S+`)

// TestExampleWorkflowsLint lints the example workflows, which name the
// action as users do (imgctl/imgctl@REF), with that reference read as
// `uses: ./`, so that their inputs are checked against action.yml.
func TestExampleWorkflowsLint(t *testing.T) {
	root := repoRoot(t)
	for _, f := range glob(t, root, "examples/*/.github/workflows/*.yml") {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		local := actionRef.ReplaceAll(b, []byte("${1}./"))
		if bytes.Equal(local, b) {
			t.Errorf("%s does not use imgctl/imgctl@REF", f)
		}
		errs, err := LintContent(root, f, local)
		if err != nil {
			t.Fatal(err)
		}
		reportErrors(t, errs)
	}
}

// wantLines returns the lines of file marked with "# want:".
func wantLines(t *testing.T, file string) map[int]string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[int]string{}
	s := bufio.NewScanner(f)
	for n := 1; s.Scan(); n++ {
		if _, note, ok := strings.Cut(s.Text(), "# want:"); ok && !strings.HasPrefix(strings.TrimSpace(s.Text()), "#") {
			want[n] = strings.TrimSpace(note)
		}
	}
	if len(want) == 0 {
		t.Fatalf("%s marks no line with # want:", file)
	}
	return want
}

// checkWanted fails unless every marked line has an error and every error
// is on a marked line.
func checkWanted(t *testing.T, file string, errs []*actionlint.Error) {
	t.Helper()
	want := wantLines(t, file)
	got := map[int]bool{}
	for _, e := range errs {
		if _, ok := want[e.Line]; !ok {
			t.Errorf("unexpected error: %s", e)
		}
		got[e.Line] = true
		t.Logf("found: %s", e)
	}
	for line, note := range want {
		if !got[line] {
			t.Errorf("%s:%d: no error reported (%s)", filepath.Base(file), line, note)
		}
	}
}

// TestLintFindsBrokenWorkflow: the linter the CI test relies on fails a
// broken workflow, one finding per mistake, at its line; among them an
// input action.yml does not declare.
func TestLintFindsBrokenWorkflow(t *testing.T) {
	file, err := filepath.Abs("testdata/broken-workflow.yml")
	if err != nil {
		t.Fatal(err)
	}
	errs, err := Lint(repoRoot(t), file)
	if err != nil {
		t.Fatal(err)
	}
	checkWanted(t, file, errs)
}

// TestLintActionFindsBrokenAction: LintAction reports a composite run step
// without a shell, an input that is not declared and an output whose step
// does not exist, at their lines in action.yml.
func TestLintActionFindsBrokenAction(t *testing.T) {
	dir, err := filepath.Abs("testdata/broken-action")
	if err != nil {
		t.Fatal(err)
	}
	errs, err := LintAction(dir)
	if err != nil {
		t.Fatal(err)
	}
	checkWanted(t, filepath.Join(dir, ActionFile), errs)
}
