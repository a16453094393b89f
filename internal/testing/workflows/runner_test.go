package workflows

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// runner is one fake runner for the action's scripts: its RUNNER_TEMP and
// the GITHUB_PATH and GITHUB_OUTPUT files, in a directory of its own.
type runner struct {
	temp, path, output string
	env                []string
}

func newRunner(t *testing.T, runnerOS, arch string, env ...string) *runner {
	t.Helper()
	r, err := newRunnerIn(t.TempDir(), runnerOS, arch, env...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func newRunnerIn(dir, runnerOS, arch string, env ...string) (*runner, error) {
	r := &runner{temp: filepath.Join(dir, "temp"), path: filepath.Join(dir, "github_path"), output: filepath.Join(dir, "github_output")}
	if err := os.Mkdir(r.temp, 0o755); err != nil {
		return nil, err
	}
	for _, f := range []string{r.path, r.output} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			return nil, err
		}
	}
	// What a runner sets, plus HOME and the Go variables for go build; no
	// proxy variables, so that curl reaches the local release server.
	r.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"RUNNER_TEMP=" + r.temp, "RUNNER_OS=" + runnerOS, "RUNNER_ARCH=" + arch,
		"GITHUB_PATH=" + r.path, "GITHUB_OUTPUT=" + r.output}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GO") || strings.HasPrefix(kv, "CGO_") {
			r.env = append(r.env, kv)
		}
	}
	r.env = append(r.env, env...)
	return r, nil
}

// result is what a script run left.
type result struct {
	stdout, stderr string
	code           int
}

// script runs scripts/action/NAME of the repository at root with bash and
// the runner's environment.
func (r *runner) script(root, name string, env ...string) (result, error) {
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "action", name))
	cmd.Env = append(slices.Clone(r.env), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		return result{}, fmt.Errorf("running %s: %w", name, err)
	}
	return result{o.String(), e.String(), cmd.ProcessState.ExitCode()}, nil
}

// mustScript is script that fails the test when bash cannot run.
func (r *runner) mustScript(t *testing.T, name string, env ...string) result {
	t.Helper()
	res, err := r.script(repoRoot(t), name, env...)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// outputs reads the step outputs written to GITHUB_OUTPUT (name=value lines).
func (r *runner) outputs(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(r.output)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			out[k] = v
		}
	}
	return out
}

// pathDirs reads the directories added to GITHUB_PATH.
func (r *runner) pathDirs(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(r.path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// stepPath is the PATH of a later step: GITHUB_PATH's directories first.
func (r *runner) stepPath(t *testing.T) string {
	return strings.Join(append(r.pathDirs(t), "/usr/bin", "/bin"), string(os.PathListSeparator))
}

// runInstalled runs `EXE version -o json` as a later step would, found on
// the PATH GITHUB_PATH gives it, and returns the version imgctl reports.
func (r *runner) runInstalled(t *testing.T, exe string) string {
	t.Helper()
	cmd := exec.Command("bash", "-c", exe+" version -o json")
	cmd.Env = []string{"PATH=" + r.stepPath(t), "HOME=" + os.Getenv("HOME")}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s version from the PATH %s: %v", exe, r.stepPath(t), err)
	}
	var v struct {
		Version string `json:"version"`
		Go      string `json:"go"`
	}
	if err := json.Unmarshal(out, &v); err != nil || v.Go == "" {
		t.Fatalf("%s version -o json printed %q (%v)", exe, out, err)
	}
	return v.Version
}

// built is the action's build from source (install.sh with
// build-from-source), run once for all tests: they need a real binary.
var built struct {
	once   sync.Once
	dir    string
	runner *runner
	res    result
	err    error
}

// sourceBuild runs install.sh with build-from-source on this repository
// once, and returns its runner and result.
func sourceBuild(t *testing.T) (*runner, result) {
	t.Helper()
	root := repoRoot(t)
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "imgctl-action-")
		if built.err != nil {
			return
		}
		built.runner, built.err = newRunnerIn(built.dir, "Linux", "X64",
			"IMGCTL_BUILD_FROM_SOURCE=true", "GITHUB_ACTION_PATH="+root)
		if built.err != nil {
			return
		}
		built.res, built.err = built.runner.script(root, "install.sh")
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.runner, built.res
}

// sourceBinary is the imgctl binary the action built from source.
func sourceBinary(t *testing.T) string {
	t.Helper()
	r, res := sourceBuild(t)
	if res.code != 0 {
		t.Fatalf("install.sh build-from-source failed (exit %d): %s", res.code, res.stderr)
	}
	return filepath.Join(r.temp, "imgctl-bin", "imgctl")
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}
