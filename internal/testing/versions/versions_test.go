package versions

import (
	"bufio"
	"bytes"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/imgctl/imgctl/internal/testing/buildtest"
)

// toolModules are the modules of their own whose builds run in CI, with the
// packages CI builds or tests in each.
var toolModules = []struct {
	dir  string
	pkgs []string
	test bool // the packages' tests are compiled too
}{
	{dir: "internal/tools/distribution", pkgs: []string{"./registry"}},
	{dir: "internal/tools/cosign", pkgs: []string{"github.com/sigstore/cosign/v2/cmd/cosign", "github.com/sigstore/cosign/v3/cmd/cosign"}},
	{dir: "internal/tools/buildx", pkgs: []string{"github.com/docker/buildx/cmd/buildx"}},
	{dir: "internal/testing/workflows", pkgs: []string{"./..."}, test: true},
}

// pinned are the shared modules a tools module keeps at a version of its
// own, each with the reason.
var pinned = map[string]string{
	"internal/testing/workflows go.yaml.in/yaml/v4":               "actionlint v1.7.12 does not compile against v4.0.0-rc.4",
	"internal/testing/workflows github.com/clipperhouse/uax29/v2": "actionlint v1.7.12 requires v2.7.0",
}

// TestToolModulesShareImgctlVersions fails for every module that a tools
// module and imgctl's own tests both compile at different versions, and
// prints the go get that aligns it.
func TestToolModulesShareImgctlVersions(t *testing.T) {
	root, err := buildtest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	imgctl := modules(t, root, true, "./...")
	if len(imgctl) < 50 {
		t.Fatalf("imgctl's tests compile %d modules; go list is not reading the module", len(imgctl))
	}
	for _, m := range toolModules {
		t.Run(filepath.Base(m.dir), func(t *testing.T) {
			tool := modules(t, filepath.Join(root, m.dir), m.test, m.pkgs...)
			var get []string
			shared := 0
			for path, v := range tool {
				want, ok := imgctl[path]
				if !ok {
					continue
				}
				shared++
				if v == want {
					continue
				}
				if why, ok := pinned[m.dir+" "+path]; ok {
					t.Logf("%s stays at %s (imgctl: %s): %s", path, v, want, why)
					continue
				}
				get = append(get, path+"@"+want)
				t.Errorf("%s compiles %s %s, imgctl %s", m.dir, path, v, want)
			}
			if shared == 0 {
				t.Fatalf("%s shares no module with imgctl; go list is not reading it", m.dir)
			}
			if len(get) > 0 {
				sort.Strings(get)
				t.Errorf("to align them: go -C %s get %s", m.dir, strings.Join(get, " "))
			}
		})
	}
}

// modules are the modules whose packages pkgs (and, with test, their
// tests) compile, by path, at their versions, as go list reports them in
// the module at dir.
func modules(t *testing.T, dir string, test bool, pkgs ...string) map[string]string {
	t.Helper()
	args := []string{"list", "-deps", "-f", "{{with .Module}}{{.Path}} {{.Version}}{{end}}"}
	if test {
		args = append(args, "-test")
	}
	cmd := exec.Command("go", append(args, pkgs...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list in %s: %v\n%s", dir, err, stderr.Bytes())
	}
	mods := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		// The main module has no version; it is not shared.
		if path, v, ok := strings.Cut(sc.Text(), " "); ok && v != "" {
			mods[path] = v
		}
	}
	return mods
}
