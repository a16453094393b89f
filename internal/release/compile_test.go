package release

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestStampedVersion builds imgctl with the release's -ldflags and checks
// that imgctl version reports the stamp, in JSON (CheckVersion) and text.
// It builds without Compile's -trimpath so that it shares the build cache
// with the other tests that build imgctl (a -trimpath build recompiles
// every dependency: minutes on two cores); the dry run in CI runs Compile
// itself and CheckVersion on its binary.
func TestStampedVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the imgctl binary")
	}
	t.Parallel()
	s := Stamp{Version: "v9.8.7-rc.1", Revision: "0123456789abcdef0123456789abcdef01234567", Time: "2026-12-01T20:00:00Z"}
	bin := filepath.Join(t.TempDir(), "imgctl")
	build := exec.CommandContext(t.Context(), "go", "build", "-ldflags", s.LDFlags(), "-o", bin, "./cmd/imgctl")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if err := CheckVersion(t.Context(), bin, s); err != nil {
		t.Error(err)
	}
	text, err := exec.CommandContext(t.Context(), bin, "version").Output()
	if err != nil {
		t.Fatalf("imgctl version: %v", err)
	}
	for _, w := range []string{"imgctl " + s.Version + "\n", "\nrevision: " + s.Revision, "\ntime: " + s.Time + "\n", "\ngo: " + runtime.Version() + "\n"} {
		if !strings.Contains(string(text), w) {
			t.Errorf("imgctl version lacks %q:\n%s", w, text)
		}
	}
	// A binary built without the stamp does not pass for a release.
	plain := filepath.Join(t.TempDir(), "imgctl")
	build = exec.CommandContext(t.Context(), "go", "build", "-o", plain, "./cmd/imgctl")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if err := CheckVersion(t.Context(), plain, s); err == nil || !strings.Contains(err.Error(), s.Version) {
		t.Errorf("CheckVersion passed an unstamped binary: %v", err)
	}
}
