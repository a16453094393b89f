package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// TestLintBadDockerfiles: Dockerfiles the parser cannot read make lint
// exit 2 with the file name, never panic; a malformed exec form, or a RUN
// in a Windows stage, is a finding (exit 1) with the file name.
func TestLintBadDockerfiles(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		exit       int
	}{
		{"unterminated-heredoc", "FROM alpine\nRUN <<EOF\necho hi\n", 2},
		{"unterminated-copy-heredoc", "FROM alpine\nCOPY <<EOT /x\nhello\n", 2},
		{"empty", "", 2},
		{"no-from", "RUN echo hi\n", 2},
		// "b" is an image when the first FROM reads it, so no cycle.
		{"forward-stage-name", "FROM b AS a\nFROM a AS b\n", 0},
		{"unterminated-json-entrypoint", "FROM alpine\nENTRYPOINT [\"/app\",\n", 1},
		{"unterminated-json-cmd", "FROM alpine\nCMD [\"a\", \"b\"\n", 1},
		{"nul-bytes", "FROM alpine\x00\nRUN \x00\n", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "Bad.Dockerfile")
			if err := os.WriteFile(file, []byte(tc.body), 0o600); err != nil {
				t.Fatal(err)
			}
			out, errOut, code := relRun(t, "lint", "-f", file, dir)
			ok := code == tc.exit && strings.Contains(out+errOut, "Bad.Dockerfile")
			regtest.LogBadInput(t, "dockerfile-"+tc.name, "lint", code, ok)
			if !ok {
				t.Errorf("exit %d, want %d with the file name\n%s\n%s", code, tc.exit, out, errOut)
			}
		})
	}
}
