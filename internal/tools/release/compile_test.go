package release

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/imgctl/imgctl/internal/testing/buildtest"
)

// TestStampedVersion builds imgctl with Compile, as a release does, and
// checks that imgctl version reports the stamp, in JSON (CheckVersion) and
// text. Compile's flags (CGO_ENABLED=0, -trimpath) are those of `make vet`,
// which CI runs first, so every dependency is compiled already and only
// imgctl is linked (buildtest.ImgctlBinary says why).
func TestStampedVersion(t *testing.T) {
	buildtest.SkipShort(t, "a build of imgctl with the release's flags (a second compile of its graph on a cold cache)")
	t.Parallel()
	s := Stamp{Version: "v9.8.7-rc.1", Revision: "0123456789abcdef0123456789abcdef01234567", Time: "2026-12-01T20:00:00Z"}
	bin, err := Compile(t.Context(), filepath.Join("..", "..", ".."), t.TempDir(), Target{runtime.GOOS, runtime.GOARCH}, s)
	if err != nil {
		t.Fatal(err)
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
	plain := buildtest.ImgctlBinary(t)
	if err := CheckVersion(t.Context(), plain, s); err == nil || !strings.Contains(err.Error(), s.Version) {
		t.Errorf("CheckVersion passed an unstamped binary: %v", err)
	}
}
