package workflows

import (
	"debug/buildinfo"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestInstallFromSource: build-from-source builds ./cmd/imgctl of the
// action's own tree (GITHUB_ACTION_PATH) into RUNNER_TEMP, puts it on
// GITHUB_PATH, with the release's flags (CGO_ENABLED=0, -trimpath), and a
// second use in the same job builds nothing again.
func TestInstallFromSource(t *testing.T) {
	r, res := sourceBuild(t)
	if res.code != 0 {
		t.Fatalf("install.sh exit %d\nstdout: %s\nstderr: %s", res.code, res.stdout, res.stderr)
	}
	bin := filepath.Join(r.temp, "imgctl-bin")
	if got := r.pathDirs(t); !slices.Equal(got, []string{bin}) {
		t.Errorf("GITHUB_PATH = %q, want %q", got, bin)
	}
	out := r.outputs(t)
	if out["version"] != "source" || out["path"] != filepath.Join(bin, "imgctl") {
		t.Errorf("outputs = %v, want version=source and path=%s", out, filepath.Join(bin, "imgctl"))
	}
	info, err := buildinfo.ReadFile(filepath.Join(bin, "imgctl"))
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if settings["CGO_ENABLED"] != "0" || settings["-trimpath"] != "true" {
		t.Errorf("built with CGO_ENABLED=%q -trimpath=%q, want the release's 0 and true", settings["CGO_ENABLED"], settings["-trimpath"])
	}
	if v := r.runInstalled(t, "imgctl"); v == "" {
		t.Errorf("imgctl version reports no version")
	}
	again := r.mustScript(t, "install.sh", "IMGCTL_BUILD_FROM_SOURCE=true", "GITHUB_ACTION_PATH="+repoRoot(t))
	if again.code != 0 || !strings.Contains(again.stdout, "already built") {
		t.Errorf("second install: exit %d, stdout %q, want a skip", again.code, again.stdout)
	}
}
