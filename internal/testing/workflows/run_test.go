package workflows

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// actionRunner is a runner on which install.sh has put the imgctl built
// from source on GITHUB_PATH, as the action's first step does; run.sh,
// its last step, finds it on the step's PATH.
func actionRunner(t *testing.T) (*runner, []string) {
	t.Helper()
	bin := sourceBinary(t)
	r := newRunner(t, "Linux", "X64")
	if err := os.WriteFile(r.path, []byte(filepath.Dir(bin)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return r, []string{"PATH=" + r.stepPath(t)}
}

// windowsRunDockerfile has a RUN in a Windows stage: imgctl lint and build
// report run-in-windows-stage (exit 1) without a registry or a builder.
const windowsRunDockerfile = "FROM mcr.microsoft.com/windows/nanoserver:ltsc2022\nRUN echo hello\n"

func contextDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(windowsRunDockerfile), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// bakeFile writes a bake file whose one target builds ctx to a registry
// that does not answer: imgctl bake fails on the tag check (exit 2).
func bakeFile(t *testing.T, ctx string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "docker-bake.hcl")
	hcl := "target \"default\" {\n  context = \"" + ctx + "\"\n  platforms = [\"ltsc2022\"]\n  tags = [\"127.0.0.1:1/hello:1\"]\n}\n"
	if err := os.WriteFile(f, []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestRunScript runs the action's verb step (scripts/action/run.sh) with
// the action's inputs as the composite step passes them, on the real
// imgctl, and checks its exit code, its outputs and what imgctl was given.
func TestRunScript(t *testing.T) {
	ctx := contextDir(t)
	for _, tc := range []struct {
		name     string
		inputs   []string
		wantCode int
		want     map[string]string // outputs; "*" is any non-empty value
		stderr   string
	}{
		{name: "passes", inputs: []string{"IMGCTL_COMMAND=version", "IMGCTL_ARGS=  --output=json  \n\n"},
			want: map[string]string{"exit-code": "0"}},
		{name: "findings fail the step", inputs: []string{"IMGCTL_COMMAND=lint", "IMGCTL_ARGS=--windows=ltsc2022\n" + ctx},
			wantCode: 1, want: map[string]string{"exit-code": "1"}, stderr: "reported findings (exit 1)"},
		{name: "findings without fail-on-findings", inputs: []string{"IMGCTL_COMMAND=lint", "IMGCTL_ARGS=--windows=ltsc2022\n" + ctx, "IMGCTL_FAIL_ON_FINDINGS=false"},
			want: map[string]string{"exit-code": "1"}},
		{name: "usage errors always fail", inputs: []string{"IMGCTL_COMMAND=resolve", "IMGCTL_FAIL_ON_FINDINGS=false"},
			wantCode: 2, want: map[string]string{"exit-code": "2"}, stderr: "failed (exit 2)"},
		{name: "a two-word verb", inputs: []string{"IMGCTL_COMMAND=index create", "IMGCTL_ARGS=--dry-run"},
			wantCode: 2, want: map[string]string{"exit-code": "2"}, stderr: "imgctl: requires at least 1 arg(s)"},
		{name: "build gets a metadata file", inputs: []string{"IMGCTL_COMMAND=build", "IMGCTL_ARGS=--windows=ltsc2022\n--tag=127.0.0.1:1/hello:1\n" + ctx},
			wantCode: 1, want: map[string]string{"exit-code": "1", "metadata-file": "*"}},
		{name: "build keeps the metadata file it was given", inputs: []string{"IMGCTL_COMMAND=build", "IMGCTL_ARGS=--windows=ltsc2022\n--metadata-file=/tmp/m.json\n--tag=127.0.0.1:1/hello:1\n" + ctx},
			wantCode: 1, want: map[string]string{"exit-code": "1", "metadata-file": "/tmp/m.json"}},
		{name: "bake gets a metadata file, and no digest", inputs: []string{"IMGCTL_COMMAND=bake", "IMGCTL_ARGS=--file=" + bakeFile(t, ctx)},
			wantCode: 2, want: map[string]string{"exit-code": "2", "metadata-file": "*"}, stderr: "failed (exit 2)"},
		{name: "no shell in the command", inputs: []string{"IMGCTL_COMMAND=version; touch pwned"},
			wantCode: 2, stderr: "is not an imgctl verb"},
		{name: "no command", wantCode: 2, stderr: "no command given"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, path := actionRunner(t)
			res := r.mustScript(t, "run.sh", append(path, tc.inputs...)...)
			if res.code != tc.wantCode {
				t.Fatalf("run.sh exit %d, want %d\nstdout: %s\nstderr: %s", res.code, tc.wantCode, res.stdout, res.stderr)
			}
			if !strings.Contains(res.stderr, tc.stderr) {
				t.Errorf("stderr = %q, want it to say %q", res.stderr, tc.stderr)
			}
			out := r.outputs(t)
			for k, v := range tc.want {
				if got, ok := out[k]; !ok || (v == "*" && got == "") || (v != "*" && got != v) {
					t.Errorf("output %s = %q, want %q (all: %v)", k, got, v, out)
				}
			}
			if len(out) != len(tc.want) {
				t.Errorf("outputs = %v, want only %v", out, tc.want)
			}
			if strings.HasPrefix(out["metadata-file"], r.temp) && !strings.Contains(res.stdout, "--metadata-file="+out["metadata-file"]) {
				t.Errorf("imgctl was not given --metadata-file=%s: %s", out["metadata-file"], res.stdout)
			}
		})
	}
}

// TestRunScriptOutputFile: output-file gets imgctl's standard output,
// which still reaches the log.
func TestRunScriptOutputFile(t *testing.T) {
	r, path := actionRunner(t)
	file := filepath.Join(t.TempDir(), "version.json")
	res := r.mustScript(t, "run.sh", append(path, "IMGCTL_COMMAND=version", "IMGCTL_ARGS=-o=json", "IMGCTL_OUTPUT_FILE="+file)...)
	if res.code != 0 {
		t.Fatalf("run.sh exit %d: %s", res.code, res.stderr)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Go string `json:"go"`
	}
	if err := json.Unmarshal(b, &v); err != nil || v.Go == "" {
		t.Fatalf("output file holds %q (%v), want imgctl version -o json", b, err)
	}
	if !strings.Contains(res.stdout, string(b)) {
		t.Errorf("the log (%q) lacks imgctl's output", res.stdout)
	}
}
