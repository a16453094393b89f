package buildtest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// EnvBuildkitd names the environment variable that points at a buildkitd binary.
const EnvBuildkitd = "IMGCTL_BUILDKITD"

// modulePath is the module whose root holds bin/buildkitd.
const modulePath = "github.com/imgctl/imgctl"

// ErrNoBuildkitd is returned when no buildkitd binary can be found.
var ErrNoBuildkitd = errors.New("buildkitd binary not found")

// ErrNoRunc is returned when runc is not on PATH.
var ErrNoRunc = errors.New("runc not found on PATH (apt-get install -y runc)")

// BuildkitdPath returns $IMGCTL_BUILDKITD or <module root>/bin/buildkitd,
// and ErrNoBuildkitd when that file does not exist.
func BuildkitdPath() (string, error) {
	p := os.Getenv(EnvBuildkitd)
	if p == "" {
		root, err := ModuleRoot()
		if err != nil {
			return "", fmt.Errorf("%w: %w", ErrNoBuildkitd, err)
		}
		p = filepath.Join(root, "bin", "buildkitd")
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%w: %w (set %s or run `go build -o bin/buildkitd github.com/moby/buildkit/cmd/buildkitd` in the module root)",
			ErrNoBuildkitd, err, EnvBuildkitd)
	}
	return filepath.Abs(p)
}

// ModuleRoot walks up from the working directory to the directory whose
// go.mod declares module github.com/imgctl/imgctl.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		dt, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(dt, []byte("module "+modulePath+"\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of %s above the working directory", modulePath)
		}
		dir = parent
	}
}

func runcPath() (string, error) {
	p, err := exec.LookPath("runc")
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrNoRunc, err)
	}
	return p, nil
}

// BinTool returns $env when it is set, else <module root>/bin/name: a
// tool the tests run as users run it, built from its own tools module by
// `make target`. A missing file is an error that names that target.
func BinTool(name, env, target string) (string, error) {
	p := os.Getenv(env)
	if p == "" {
		root, err := ModuleRoot()
		if err != nil {
			return "", err
		}
		p = filepath.Join(root, "bin", name)
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%s: %w (run `make %s` in the module root, or set %s)", name, err, target, env)
	}
	return filepath.Abs(p)
}

// BuildxCLI returns the real buildx CLI (bin/buildx, `make buildx-cli`,
// or $IMGCTL_BUILDX).
func BuildxCLI() (string, error) { return BinTool("buildx", "IMGCTL_BUILDX", "buildx-cli") }
