package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/imgctl/imgctl/build/nodes"
	"github.com/imgctl/imgctl/internal/testing/buildtest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/lint"
	"github.com/imgctl/imgctl/registry"
)

// bakeDocsHCL is an HCL definition in the shapes buildx's documentation
// uses: variables (TAG from the environment), a function, a group,
// inherits, a matrix with a function in its name, attest, cache,
// secrets and annotations.
const bakeDocsHCL = `variable "TAG" {
  default = "latest"
}
variable "REGISTRY" {
  default = "docker.io/username"
}
function "tag" {
  params = [name, tag]
  result = ["${REGISTRY}/${name}:${tag}"]
}
group "default" {
  targets = ["webapp", "db"]
}
target "_common" {
  dockerfile = "Dockerfile"
  args = {
    GO_VERSION = "1.26"
    BUILDKIT_CONTEXT_KEEP_GIT_DIR = 1
  }
  platforms = ["linux/amd64", "linux/arm64"]
}
target "webapp" {
  inherits = ["_common"]
  context = "./webapp"
  tags = tag("webapp", TAG)
  cache-from = ["type=registry,ref=${REGISTRY}/webapp:cache"]
  cache-to = ["type=registry,ref=${REGISTRY}/webapp:cache,mode=max"]
  attest = ["type=provenance,mode=max", "type=sbom"]
  annotations = ["index:org.opencontainers.image.title=webapp"]
  secret = ["id=token,env=GITHUB_TOKEN"]
}
target "db" {
  name = "db-${replace(pg, ".", "-")}"
  matrix = {
    pg = ["15.4", "16.1"]
  }
  inherits = ["_common"]
  target = "db"
  args = {
    PG_VERSION = pg
  }
  tags = tag("db", "${pg}-${TAG}")
  no-cache = true
}
target "win" {
  tags = tag("win", TAG)
  platforms = ["linux/amd64", "windows(10.0.20348)/amd64"]
}
`

const bakeDocsJSON = `{
  "variable": {
    "TAG": {"default": "1.0"}
  },
  "group": {
    "default": {"targets": ["api"]}
  },
  "target": {
    "api": {
      "context": "cwd://api",
      "dockerfile": "Dockerfile.api",
      "tags": ["reg.example.com/api:${TAG}"],
      "platforms": ["linux/amd64"],
      "args": {"A": "1"}
    }
  }
}
`

const bakeDocsCompose = `services:
  web:
    image: reg.example.com/web:1
    build:
      context: ./web
      dockerfile: Dockerfile
      args:
        VERSION: "1"
      platforms: [linux/amd64, linux/arm64]
      tags: ["reg.example.com/web:1", "reg.example.com/web:latest"]
      cache_from: ["type=registry,ref=reg.example.com/web:cache"]
      target: final
  db:
    image: postgres:16
`

// bakePrint is the part of a --print document the comparison reads.
type bakePrint struct {
	Group  map[string]any `json:"group"`
	Target map[string]any `json:"target"`
}

// TestBakePrintMatchesBuildx runs imgctl bake --print and the real
// docker buildx bake --print (bin/buildx) on the same files, in the same
// directory with the same environment, and compares the "target" and
// "group" objects.
func TestBakePrintMatchesBuildx(t *testing.T) {
	buildtest.SkipShort(t, buildtest.NeedsBuildx)
	buildx, err := buildtest.BuildxCLI()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for n, c := range map[string]string{"docker-bake.hcl": bakeDocsHCL, "docker-bake.json": bakeDocsJSON, "compose.yaml": bakeDocsCompose} {
		writeFile(t, filepath.Join(dir, n), c)
	}
	for _, d := range []string{"webapp", "api", "web"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	t.Setenv("TAG", "2.0")
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	dockerConfig := t.TempDir()
	for _, args := range [][]string{
		{"-f", "docker-bake.hcl"},
		{"-f", "docker-bake.hcl", "webapp"},
		{"-f", "docker-bake.hcl", "db"},
		{"-f", "docker-bake.hcl", "db-16-1", "win"},
		{"-f", "docker-bake.hcl", "--set", "webapp.tags=reg.example.com/webapp:set", "--set", "*.platform=linux/amd64", "--set", "db*.args.EXTRA=1"},
		{"-f", "docker-bake.hcl", "--provenance", "mode=max", "--sbom=false"},
		{"-f", "docker-bake.json"},
		{"-f", "compose.yaml"},
		{"-f", "compose.yaml", "-f", "docker-bake.json", "web", "api"},
		{}, // buildx's default names: compose.yaml, docker-bake.json, docker-bake.hcl
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			out, stderr, code := run(t, append([]string{"bake", "--print"}, args...)...)
			if code != 0 {
				t.Fatalf("imgctl exit %d: %s", code, stderr)
			}
			cmd := exec.Command(buildx, append([]string{"bake", "--print"}, args...)...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "DOCKER_CONFIG="+dockerConfig, "BUILDX_CONFIG="+filepath.Join(dockerConfig, "buildx"))
			want, err := cmd.Output()
			if err != nil {
				t.Fatalf("buildx: %v", err)
			}
			var got, exp bakePrint
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("imgctl: %v\n%s", err, out)
			}
			if err := json.Unmarshal(want, &exp); err != nil {
				t.Fatalf("buildx: %v\n%s", err, want)
			}
			if len(exp.Target) == 0 || !reflect.DeepEqual(got, exp) {
				t.Errorf("imgctl bake --print\n%s\ndocker buildx bake --print\n%s", out, want)
			}
		})
	}
	t.Run("files from BUILDX_BAKE_FILE", func(t *testing.T) {
		t.Setenv("BUILDX_BAKE_FILE", "docker-bake.json")
		out, _, code := run(t, "bake", "--print")
		if code != 0 || !strings.Contains(out, `"api"`) || strings.Contains(out, `"webapp"`) {
			t.Errorf("exit %d\n%s", code, out)
		}
	})
	// The forms buildx's own platform parser refuses print as written:
	// imgctl takes them out before any buildx platform parsing.
	writeFile(t, filepath.Join(dir, "windows.hcl"), "target \"w\" {\n  tags = [\"r/w:1\"]\n  platforms = [\"linux/amd64\", \"ltsc2022\", \"windows/amd64:10.0.26100\"]\n}\n")
	out, stderr, code := run(t, "bake", "--print", "-f", "windows.hcl", "w")
	if code != 0 || !strings.Contains(out, `"ltsc2022"`) || !strings.Contains(out, `"windows/amd64:10.0.26100"`) {
		t.Errorf("imgctl exit %d\n%s%s", code, out, stderr)
	}
	cmd := exec.Command(buildx, "bake", "--print", "-f", "windows.hcl", "w")
	cmd.Dir = dir
	if msg, err := cmd.CombinedOutput(); err == nil && !strings.Contains(string(msg), "ERROR") {
		t.Logf("buildx now reads ltsc2022 as a platform:\n%s", msg)
	}
}

// TestBakeBadInput: bad definitions are usage errors (exit 2) naming the
// file and line, before any tag is read or builder contacted; a RUN in a
// Windows stage is lint's finding (exit 1), with the other targets still
// run; a target that fails does not hide the others.
func TestBakeBadInput(t *testing.T) {
	reg := regtest.New(t)
	host := reg.Host()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "Dockerfile.run"), "ARG WINDOWS_BASE=mcr.microsoft.com/windows/nanoserver:ltsc2022\nFROM ${WINDOWS_BASE}\nRUN echo hi\n")
	writeFile(t, filepath.Join(dir, "Dockerfile"), "FROM scratch\nCOPY Dockerfile /Dockerfile\n")
	existing := host + "/bake/existing:1"
	img, err := regtest.LinuxImage("amd64")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := regtest.Push(reg.MustRef(t, "bake/existing:1"), img); err != nil {
		t.Fatal(err)
	}
	hcl := fmt.Sprintf(`target "runs" {
  context = %q
  dockerfile = "Dockerfile.run"
  platforms = ["ltsc2022"]
  tags = ["%s/bake/runs:1"]
}
target "linux" {
  context = %q
  platforms = ["linux/amd64"]
  tags = ["%s/bake/linux:1"]
}
target "existing" {
  context = %q
  tags = [%q]
}
target "badplatform" {
  context = %q
  tags = ["%s/bake/bad:1"]
  platforms = ["windows/amd64:10.0.1"]
}
target "dup" {
  inherits = ["linux"]
}
target "loop" {
  inherits = ["loop"]
}
group "lint-and-builder" {
  targets = ["runs", "linux"]
}
group "nothing" {
  targets = []
}
`, dir, host, dir, host, dir, existing, dir, host)
	file := filepath.Join(dir, "docker-bake.hcl")
	writeFile(t, file, hcl)
	noBuilder := "unix:///nonexistent/buildkitd.sock"
	for _, tc := range []struct {
		name       string
		args       []string
		code       int
		stdout     []string
		stderr     []string
		notStderr  []string
		notPrinted bool
	}{
		{name: "unknown target", args: []string{"gone"}, code: ExitError, stderr: []string{file + `: unknown target: no target or group "gone"`}},
		{name: "cycle in inherits", args: []string{"loop"}, code: ExitError, stderr: []string{file + `:25: cycle in inherits: target "loop": loop → loop`}},
		{name: "malformed release", args: []string{"badplatform"}, code: ExitError, stderr: []string{file + `:19: target "badplatform": invalid platform: "windows/amd64:10.0.1"`}},
		{name: "two targets write one tag", args: []string{"linux", "dup"}, code: ExitError, stderr: []string{`tag written by two targets: ` + host + `/bake/linux:1: targets "dup" (` + file + `:21) and "linux" (` + file + `:7)`}},
		{name: "set on a missing key", args: []string{"--set", "linux.colour=red", "linux"}, code: ExitError, stderr: []string{`--set: ` + file + `: invalid override "linux.colour=red": unknown key: colour`}},
		{name: "empty group", args: []string{"nothing"}, code: ExitError, stderr: []string{file + `:30: empty group: group "nothing" has no targets`}},
		{name: "existing tag refused before any build", args: []string{"linux", "existing"}, code: ExitError,
			stderr: []string{`target "existing" (` + file + `:12): ` + registry.ErrTagExists.Error() + " " + existing}, notStderr: []string{"nonexistent", "pushed"}},
		{name: "RUN in a Windows stage", args: []string{"runs"}, code: ExitFailed,
			stdout: []string{filepath.Join(dir, "Dockerfile.run") + ":3: [" + lint.RuleRunInWindowsStage + "]"}, stderr: []string{"bake: 1 of 1 target(s) failed: runs: 1 lint finding(s)"}, notStderr: []string{"nonexistent"}},
		{name: "lint and an unreachable builder", args: []string{"lint-and-builder", "-o", "json"}, code: ExitError,
			stdout: []string{`"rule": "run-in-windows-stage"`, `"passed": false`},
			stderr: []string{"imgctl: bake: linux: ", nodes.ErrNoBuilder.Error(), "; runs: 1 lint finding(s)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := run(t, append([]string{"bake", "-f", file, "--builder", noBuilder, "--progress", "plain"}, tc.args...)...)
			if code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			for _, w := range tc.stdout {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q", w)
				}
			}
			for _, w := range tc.stderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q", w)
				}
			}
			for _, w := range tc.notStderr {
				if strings.Contains(stderr, w) {
					t.Errorf("stderr has %q", w)
				}
			}
			if t.Failed() {
				t.Logf("stdout:\n%s\nstderr:\n%s", out, tail(stderr, 30))
			}
		})
	}
}
