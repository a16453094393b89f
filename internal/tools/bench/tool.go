package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// errUnsupported is returned by a tool for an operation it has no command for.
var errUnsupported = errors.New("operation not supported by this tool")

// op is one operation a case asks every tool to perform.
type op interface{ opName() string }

// indexCreate merges Sources (full references) into one index tagged Target.
// Platforms lists the os/arch[/variant] to take from sources that are
// indexes, for tools that otherwise nest an index instead of merging it.
type indexCreate struct {
	Target    string
	Sources   []string
	Platforms []string
}

func (indexCreate) opName() string { return "index create" }

// tool is one command-line client under test. New cases add an op type and
// a branch in each tool's args; tools that cannot do it return errUnsupported.
type tool interface {
	Name() string
	// Version is known after Install.
	Version() string
	// Install makes the tool available (installing or building it) in binDir.
	Install(ctx context.Context, binDir string) error
	// Configure points the tool at a plain-HTTP registry on host, once per
	// registry, in the tool's private home.
	Configure(ctx context.Context, host string) error
	// Run performs o against the registry.
	Run(ctx context.Context, o op) error
}

// cmdTool runs a tool as a child process with a private HOME and
// DOCKER_CONFIG, so that no tool reads another's credentials or settings.
type cmdTool struct {
	bin  string
	home string
	// rss, when set, records the peak RSS of the processes exec runs.
	rss *peakRSS
	// extraEnv is added to env, such as COSIGN_PASSWORD for imgctl sign.
	extraEnv []string
}

func newCmdTool(home string) (cmdTool, error) {
	if err := os.MkdirAll(filepath.Join(home, ".docker"), 0o755); err != nil {
		return cmdTool{}, err
	}
	return cmdTool{home: home}, nil
}

// env is a minimal environment: nothing from the caller's registry setup.
func (t cmdTool) env() []string {
	return append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + t.home,
		"DOCKER_CONFIG=" + filepath.Join(t.home, ".docker"),
		"XDG_CONFIG_HOME=" + filepath.Join(t.home, ".config"),
		"TMPDIR=" + os.TempDir(),
		"NO_PROXY=127.0.0.1,localhost",
	}, t.extraEnv...)
}

// exec runs the tool binary with args and returns stdout; errors carry the
// last lines of stderr.
func (t cmdTool) exec(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, t.bin, args...)
	cmd.Env = t.env()
	cmd.Dir = t.home
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t.rss.prepare()
	err := cmd.Run()
	t.rss.observe(cmd.ProcessState)
	if err != nil {
		msg := tail(stderr.String(), 3)
		if msg == "" {
			msg = tail(stdout.String(), 3)
		}
		return stdout.String(), fmt.Errorf("%s %s: %w: %s", filepath.Base(t.bin), strings.Join(args[:min(len(args), 3)], " "), err, msg)
	}
	return stdout.String(), nil
}

// tail returns the last n non-empty lines of s, joined by " | ".
func tail(s string, n int) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines[max(0, len(lines)-n):], " | ")
}

// goInstall installs pkg@version into binDir unless the binary there already
// reports that version of module mod.
func goInstall(ctx context.Context, binDir, pkg, mod, version string) (string, error) {
	bin := filepath.Join(binDir, filepath.Base(pkg))
	if v, err := moduleVersion(ctx, bin, mod); err == nil && v == version {
		return bin, nil
	}
	cmd := exec.CommandContext(ctx, "go", "install", pkg+"@"+version)
	cmd.Env = append(os.Environ(), "GOBIN="+binDir, "GOFLAGS=-buildvcs=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install %s@%s: %w: %s", pkg, version, err, tail(string(out), 5))
	}
	if v, err := moduleVersion(ctx, bin, mod); err != nil || v != version {
		return "", fmt.Errorf("installed %s reports %q (%v), want %s", bin, v, err, version)
	}
	return bin, nil
}

// moduleVersion reads the version of module mod (main or dependency) from
// the build information of bin, as `go version -m` prints it.
func moduleVersion(ctx context.Context, bin, mod string) (string, error) {
	if _, err := os.Stat(bin); err != nil {
		return "", err
	}
	out, err := exec.CommandContext(ctx, "go", "version", "-m", bin).Output()
	if err != nil {
		return "", fmt.Errorf("go version -m %s: %w", bin, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 3 && (f[0] == "mod" || f[0] == "dep") && f[1] == mod {
			return f[2], nil
		}
	}
	return "", fmt.Errorf("%s: module %s not in build info", bin, mod)
}
