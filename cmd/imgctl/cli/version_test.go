package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/imgctl/imgctl/internal/testing/buildtest"
)

var versionDepPaths = []string{"github.com/moby/buildkit", "github.com/google/go-containerregistry", "github.com/sigstore/cosign/v2"}

// jsonVersion is the version -o json contract, decoded strictly.
type jsonVersion struct {
	Version      *string `json:"version"`
	Revision     *string `json:"revision"`
	Time         *string `json:"time"`
	Modified     *bool   `json:"modified"`
	Go           string  `json:"go"`
	Dependencies []struct {
		Path    string `json:"path"`
		Version string `json:"version"`
	} `json:"dependencies"`
}

func decodeVersion(t *testing.T, s string) jsonVersion {
	t.Helper()
	var v jsonVersion
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decoding version JSON: %v\n%s", err, s)
	}
	if v.Version == nil || *v.Version == "" || v.Revision == nil || v.Time == nil || v.Modified == nil || v.Go != runtime.Version() {
		t.Fatalf("version JSON misses contract fields: %s", s)
	}
	if len(v.Dependencies) != len(versionDepPaths) {
		t.Fatalf("dependencies: %+v", v.Dependencies)
	}
	for i, p := range versionDepPaths {
		if v.Dependencies[i].Path != p {
			t.Errorf("dependency %d = %s, want %s", i, v.Dependencies[i].Path, p)
		}
	}
	return v
}

// goModVersions reads the versions go.mod requires, by module path.
func goModVersions(t *testing.T) map[string]string {
	t.Helper()
	dt, err := os.ReadFile("../../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for line := range strings.Lines(string(dt)) {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(f) >= 2 && strings.HasPrefix(f[1], "v") {
			out[f[0]] = f[1]
		}
	}
	for _, p := range versionDepPaths {
		if out[p] == "" {
			t.Fatalf("go.mod does not require %s", p)
		}
	}
	return out
}

// TestVersion runs version in this test binary: the main module is
// "(devel)", and a test binary's build information lists no
// dependencies, so their versions are unknown here (TestVersionBinary
// checks them in a real binary).
func TestVersion(t *testing.T) {
	t.Parallel()
	out, errOut, code := run(t, "version")
	if code != ExitOK {
		t.Fatalf("version: exit %d\n%s%s", code, out, errOut)
	}
	for _, w := range []string{"imgctl (devel)\n", "\nrevision: ", "\ngo: " + runtime.Version() + "\n", "\ngithub.com/moby/buildkit ",
		"\ngithub.com/google/go-containerregistry ", "\ngithub.com/sigstore/cosign/v2 "} {
		if !strings.Contains(out, w) {
			t.Errorf("text output lacks %q:\n%s", w, out)
		}
	}
	out, _, code = run(t, "version", "-o", "json")
	if v := decodeVersion(t, out); code != ExitOK || *v.Version != "(devel)" {
		t.Errorf("version -o json: exit %d\n%s", code, out)
	}
	if _, _, code := run(t, "version", "extra"); code != ExitError {
		t.Errorf("version with an argument: exit %d, want 2", code)
	}
}

// TestVersionBinary builds imgctl and checks that version reports the
// BuildKit, go-containerregistry and cosign versions go.mod pins, in text
// and JSON.
func TestVersionBinary(t *testing.T) {
	buildtest.SkipShort(t, "a build of imgctl with the release's flags (a second compile of its graph on a cold cache)")
	t.Parallel()
	mod := goModVersions(t)
	bin := buildtest.ImgctlBinary(t)
	text, err := exec.CommandContext(t.Context(), bin, "version").Output()
	if err != nil {
		t.Fatalf("imgctl version: %v", err)
	}
	for _, p := range versionDepPaths {
		if w := "\n" + p + " " + mod[p] + "\n"; !strings.Contains(string(text), w) {
			t.Errorf("text output lacks %q:\n%s", w, text)
		}
	}
	js, err := exec.CommandContext(t.Context(), bin, "version", "-o", "json").Output()
	if err != nil {
		t.Fatalf("imgctl version -o json: %v", err)
	}
	v := decodeVersion(t, string(js))
	for i, p := range versionDepPaths {
		if got := v.Dependencies[i].Version; got != mod[p] {
			t.Errorf("%s = %q, want %q as go.mod pins", p, got, mod[p])
		}
	}
}
