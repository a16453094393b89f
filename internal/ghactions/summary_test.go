package ghactions

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAppendSummary checks that the summary is appended to what earlier
// steps wrote, never truncated, and that a missing file is created.
func TestAppendSummary(t *testing.T) {
	path := filepath.Join(t.TempDir(), "step_summary")
	if err := AppendSummary(path, "# first\n"); err != nil {
		t.Fatal(err)
	}
	if err := AppendSummary(path, "# second\n"); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "# first\n# second\n" {
		t.Errorf("summary file = %q", got)
	}
	if err := AppendSummary(filepath.Join(path, "not-a-dir"), "x"); err == nil {
		t.Error("appending under a regular file succeeded")
	}
}

func TestTable(t *testing.T) {
	got := Table([]string{"rule", "message"}, [][]string{{"a|b", "line1\nline2"}, {"c", "`sha256:1`"}})
	want := "| rule | message |\n| --- | --- |\n| a\\|b | line1<br>line2 |\n| c | `sha256:1` |\n\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestInActions(t *testing.T) {
	env := map[string]string{EnvActions: "true"}
	if !InActions(func(k string) string { return env[k] }) {
		t.Error("GITHUB_ACTIONS=true is not Actions")
	}
	env[EnvActions] = "1"
	if InActions(func(k string) string { return env[k] }) {
		t.Error(`GITHUB_ACTIONS=1 is Actions; the runner sets "true"`)
	}
}
