package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKeygenPrefix: PREFIX is accepted as the argument, as the README
// documents and cosign users type, or as --output-key-prefix; both at once
// must agree. Not parallel: it sets the environment.
func TestKeygenPrefix(t *testing.T) {
	t.Setenv("COSIGN_PASSWORD", "s3cret")
	dir := t.TempDir()
	for _, tc := range []struct {
		name   string
		args   []string
		exit   int
		prefix string // the files written, or in the error
	}{
		{"argument", []string{"keygen", filepath.Join(dir, "arg")}, 0, filepath.Join(dir, "arg")},
		{"flag", []string{"keygen", "--output-key-prefix", filepath.Join(dir, "flag")}, 0, filepath.Join(dir, "flag")},
		{"both, equal", []string{"keygen", filepath.Join(dir, "both"), "--output-key-prefix", filepath.Join(dir, "both")}, 0, filepath.Join(dir, "both")},
		{"both, different", []string{"keygen", filepath.Join(dir, "one"), "--output-key-prefix", filepath.Join(dir, "two")}, 2, "differ"},
		{"two arguments", []string{"keygen", filepath.Join(dir, "a"), filepath.Join(dir, "b")}, 2, "accepts at most 1 arg"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(t, tc.args...)
			if code != tc.exit {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.exit, out, errOut)
			}
			if tc.exit != 0 {
				if !strings.Contains(errOut, tc.prefix) {
					t.Errorf("stderr %q lacks %q", errOut, tc.prefix)
				}
				return
			}
			for _, f := range []string{tc.prefix + ".key", tc.prefix + ".pub"} {
				if _, err := os.Stat(f); err != nil || !strings.Contains(out, f) {
					t.Errorf("%s: %v\n%s", f, err, out)
				}
			}
		})
	}
	for _, p := range []string{"one", "two", "a", "b"} {
		if _, err := os.Stat(filepath.Join(dir, p+".key")); err == nil {
			t.Errorf("a refused keygen wrote %s.key", p)
		}
	}
}
