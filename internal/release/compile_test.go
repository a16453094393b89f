package release

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestCompileStampsVersion builds imgctl as the release does (Compile:
// CGO off, -trimpath, the release -ldflags) for this machine's platform
// and checks that imgctl version reports the stamp, in JSON and text.
func TestCompileStampsVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the imgctl binary")
	}
	t.Parallel()
	s := Stamp{Version: "v9.8.7-rc.1", Revision: "0123456789abcdef0123456789abcdef01234567", Time: "2026-12-01T20:00:00Z"}
	bin, err := Compile(t.Context(), filepath.Join("..", ".."), t.TempDir(), Target{runtime.GOOS, runtime.GOARCH}, s)
	if err != nil {
		t.Fatal(err)
	}
	js, err := exec.CommandContext(t.Context(), bin, "version", "-o", "json").Output()
	if err != nil {
		t.Fatalf("imgctl version -o json: %v", err)
	}
	var v struct {
		Version, Revision, Time, Go string
	}
	if err := json.Unmarshal(js, &v); err != nil {
		t.Fatalf("%v\n%s", err, js)
	}
	if v.Version != s.Version || v.Revision != s.Revision || v.Time != s.Time || v.Go != runtime.Version() {
		t.Errorf("version -o json = %+v, want the stamp %+v", v, s)
	}
	text, err := exec.CommandContext(t.Context(), bin, "version").Output()
	if err != nil {
		t.Fatalf("imgctl version: %v", err)
	}
	for _, w := range []string{"imgctl " + s.Version + "\n", "\nrevision: " + s.Revision, "\ntime: " + s.Time + "\n"} {
		if !strings.Contains(string(text), w) {
			t.Errorf("imgctl version lacks %q:\n%s", w, text)
		}
	}
}
