package release

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// GitStamp is the stamp of the commit checked out at root: version
// (default git describe --tags --always --dirty), revision and commit time
// in UTC.
func GitStamp(ctx context.Context, root, version string) (Stamp, error) {
	git := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out)), nil
	}
	var s Stamp
	var err error
	if s.Version = version; s.Version == "" {
		if s.Version, err = git("describe", "--tags", "--always", "--dirty"); err != nil {
			return s, err
		}
	}
	if s.Revision, err = git("rev-parse", "HEAD"); err != nil {
		return s, err
	}
	ct, err := git("log", "-1", "--format=%ct", "HEAD")
	if err != nil {
		return s, err
	}
	sec, err := strconv.ParseInt(ct, 10, 64)
	if err != nil {
		return s, fmt.Errorf("commit time %q: %w", ct, err)
	}
	s.Time = time.Unix(sec, 0).UTC().Format(time.RFC3339)
	return s, nil
}

// ModuleRoot walks up from the working directory to the directory whose
// go.mod declares module github.com/imgctl/imgctl: the root a release is
// made from.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if dt, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.Contains(dt, []byte("module github.com/imgctl/imgctl\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of github.com/imgctl/imgctl above the working directory")
		}
		dir = parent
	}
}

// Flags are the flags both release commands (make release, make
// release-dry-run) take: -version, -dist and -targets.
type Flags struct {
	version, dist, targets *string
}

// AddFlags defines the shared flags on fs.
func AddFlags(fs *flag.FlagSet) *Flags {
	return &Flags{
		version: fs.String("version", "", "release version, a tag like v1.2.0 (default: git describe --tags --always --dirty)"),
		dist:    fs.String("dist", "dist", "output directory (emptied first)"),
		targets: fs.String("targets", "", "comma-separated os/arch binaries to build (default: every release target); the image gets the Linux ones, and needs windows/amd64 (CI's dry run builds linux/amd64 and windows/amd64)"),
	}
}

// Config is the Config the parsed flags give, for the module at the
// working directory: its root, the stamp of its checked-out commit, the
// output directory (relative to the root) and the targets; log and run
// are Config.Log and Config.Imgctl.
func (f *Flags) Config(ctx context.Context, log io.Writer, run Runner) (Config, error) {
	root, err := ModuleRoot()
	if err != nil {
		return Config{}, err
	}
	stamp, err := GitStamp(ctx, root, *f.version)
	if err != nil {
		return Config{}, err
	}
	c := Config{Root: root, Dist: *f.dist, Stamp: stamp, Log: log, Imgctl: run}
	if *f.targets != "" {
		if c.Targets, err = ParseTargets(*f.targets); err != nil {
			return Config{}, err
		}
	}
	if !filepath.IsAbs(c.Dist) {
		c.Dist = filepath.Join(root, c.Dist)
	}
	return c, nil
}

// Command is the skeleton of both release commands (make release, make
// release-dry-run): the shared flags and those extra defines on one flag
// set, parsed from the process's arguments, the Config they give (with
// run as Config.Imgctl) handed to body under a context that SIGINT and
// SIGTERM cancel, and an error printed as "name: error" with exit status
// 1.
func Command(name string, run Runner, extra func(*flag.FlagSet), body func(context.Context, Config) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := parseAndRun(ctx, name, os.Args[1:], os.Stdout, run, extra, body)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}

func parseAndRun(ctx context.Context, name string, args []string, log io.Writer, run Runner, extra func(*flag.FlagSet), body func(context.Context, Config) error) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	flags := AddFlags(fs)
	if extra != nil {
		extra(fs)
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	c, err := flags.Config(ctx, log, run)
	if err != nil {
		return err
	}
	return body(ctx, c)
}
