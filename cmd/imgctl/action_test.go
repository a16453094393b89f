package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/imgctl/imgctl/internal/testing/buildtest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// TestActionBuildsAndTags runs the GitHub Action's verb step
// (scripts/action/run.sh) the way .github/workflows/build.yml does, with
// this command built and put on the step's PATH: `build` on a real
// buildkitd, pushing to the in-process registry, whose outputs name the
// metadata file and the index digest, then `index create` on that digest
// for the commit's tag. (internal/testing/workflows tests the scripts' other
// paths; it is a module of its own and cannot start these harnesses.)
func TestActionBuildsAndTags(t *testing.T) {
	buildtest.SkipShort(t, buildtest.NeedsBuildkitd) // before building imgctl
	root, err := buildtest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Dir(buildtest.ImgctlBinary(t))
	reg := regtest.New(t)
	daemon := buildtest.New(t, buildtest.Options{InsecureRegistries: []string{reg.Host()}})
	ctx := t.TempDir()
	for name, content := range map[string]string{
		"Dockerfile": "FROM scratch\nCOPY hello.txt /hello.txt\n",
		"hello.txt":  "hello from the action\n",
	} {
		if err := os.WriteFile(filepath.Join(ctx, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// step runs run.sh with the action's inputs and returns its outputs.
	step := func(t *testing.T, command string, args ...string) map[string]string {
		t.Helper()
		output := filepath.Join(t.TempDir(), "github_output")
		cmd := exec.Command("bash", filepath.Join(root, "scripts", "action", "run.sh"))
		cmd.Env = []string{
			"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
			"RUNNER_TEMP=" + t.TempDir(), "GITHUB_OUTPUT=" + output,
			"IMGCTL_COMMAND=" + command, "IMGCTL_ARGS=" + strings.Join(args, "\n"),
		}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("imgctl %s through run.sh: %v\nstdout:\n%s\nstderr:\n%s", command, err, stdout.String(), stderr.String())
		}
		b, err := os.ReadFile(output)
		if err != nil {
			t.Fatal(err)
		}
		outs := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				outs[k] = v
			}
		}
		return outs
	}

	repo := reg.Host() + "/hello"
	built := step(t, "build", "--builder="+daemon.Addr, "--progress=plain",
		"--platform=linux/amd64,linux/arm64", "--tag="+repo+":1.0", ctx)
	if built["exit-code"] != "0" {
		t.Fatalf("outputs %v, want exit-code 0", built)
	}
	dt, err := os.ReadFile(built["metadata-file"])
	if err != nil {
		t.Fatalf("the metadata-file output: %v", err)
	}
	var meta struct {
		Index struct {
			Ref    string `json:"ref"`
			Digest string `json:"digest"`
		} `json:"index"`
		Platforms []struct{} `json:"platforms"`
	}
	if err := json.Unmarshal(dt, &meta); err != nil {
		t.Fatalf("metadata file: %v\n%s", err, dt)
	}
	if !strings.HasPrefix(built["digest"], "sha256:") || built["digest"] != meta.Index.Digest || len(meta.Platforms) != 2 {
		t.Fatalf("digest output %q, metadata file %s: want the index digest of two platforms", built["digest"], dt)
	}

	tagged := step(t, "index create", "--tag="+repo+":sha-0123456789ab", repo+"@"+built["digest"])
	if tagged["exit-code"] != "0" {
		t.Fatalf("index create outputs %v, want exit-code 0", tagged)
	}
}
