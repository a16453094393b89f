// Command release makes an imgctl release with imgctl itself
// (internal/release): `make release` runs it against the real registry,
// bases and builder, `make release-dry-run` with -dry-run against an
// in-process registry, synthetic bases and a local buildkitd
// (buildtest.StartLocal) and a throw-away cosign key. Both run the same
// release.Run; only its Config differs.
//
// Real run: -repository REGISTRY/imgctl (or $IMAGE_REPOSITORY), the builder
// from $BUILDKIT_HOST, the signing key from $COSIGN_KEY (a file, or the PEM
// itself as a CI secret holds it) with $COSIGN_PASSWORD, and optionally
// $COSIGN_PUBLIC_KEY to check the signatures with.
package main

import (
	"context"
	"errors"
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

	"github.com/imgctl/imgctl/cmd/imgctl/cli"
	"github.com/imgctl/imgctl/internal/buildtest"
	"github.com/imgctl/imgctl/internal/release"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, log io.Writer) error {
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	dryRun := fs.Bool("dry-run", false, "release into an in-process registry with synthetic bases, a local buildkitd and a throw-away key")
	version := fs.String("version", "", "release version, a tag like v1.2.0 (default: git describe --tags --always --dirty)")
	dist := fs.String("dist", "dist", "output directory (emptied first)")
	repository := fs.String("repository", os.Getenv("IMAGE_REPOSITORY"), "image repository, e.g. registry.example.com/imgctl (real run)")
	linuxBase := fs.String("linux-base", "gcr.io/distroless/static:nonroot", "base of the Linux variants (real run)")
	win2022 := fs.String("windows-base-ltsc2022", "mcr.microsoft.com/windows/nanoserver:ltsc2022", "base of the ltsc2022 variant (real run)")
	win2025 := fs.String("windows-base-ltsc2025", "mcr.microsoft.com/windows/nanoserver:ltsc2025", "base of the ltsc2025 variant (real run)")
	targets := fs.String("targets", "", "comma-separated os/arch binaries to build (default: every release target); CI's dry run leaves out darwin/arm64, which the image does not need")
	if err := fs.Parse(args); err != nil {
		return err
	}
	root, err := buildtest.ModuleRoot()
	if err != nil {
		return err
	}
	stamp, err := gitStamp(ctx, root, *version)
	if err != nil {
		return err
	}
	c := release.Config{Root: root, Dist: *dist, Stamp: stamp, Log: log}
	if *targets != "" {
		if c.Targets, err = release.ParseTargets(*targets); err != nil {
			return err
		}
	}
	if !filepath.IsAbs(c.Dist) {
		c.Dist = filepath.Join(root, c.Dist)
	}
	if *dryRun {
		return dryRunRelease(ctx, c)
	}
	if *repository == "" {
		return errors.New("-repository (or $IMAGE_REPOSITORY) is required")
	}
	c.Repository, c.LinuxBase = *repository, *linuxBase
	c.WindowsBases = map[string]string{"ltsc2022": *win2022, "ltsc2025": *win2025}
	c.PublicKey = os.Getenv("COSIGN_PUBLIC_KEY")
	key, cleanup, err := keyFile(os.Getenv("COSIGN_KEY"))
	if err != nil {
		return err
	}
	defer cleanup()
	c.Key = key
	_, err = release.Run(ctx, c)
	return err
}

// dryRunRelease runs the release against buildtest.StartLocal with a key
// pair made for this run.
func dryRunRelease(ctx context.Context, c release.Config) (err error) {
	l, err := buildtest.StartLocal(ctx)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, l.Close()) }()
	keys, err := os.MkdirTemp("", "imgctl-release-keys-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(keys)
	if err := os.Setenv("COSIGN_PASSWORD", "dry-run"); err != nil {
		return err
	}
	prefix := filepath.Join(keys, "cosign")
	if code := cli.Execute(ctx, []string{"keygen", prefix}, strings.NewReader(""), c.Log, c.Log); code != cli.ExitOK {
		return fmt.Errorf("imgctl keygen: exit %d", code)
	}
	c.Repository = l.Registry.Host() + "/imgctl/imgctl"
	c.Builder = l.Builder.Addr
	c.LinuxBase = l.Bases.Distroless
	c.WindowsBases = map[string]string{"ltsc2022": l.Bases.Nanoserver2022, "ltsc2025": l.Bases.Nanoserver2025}
	c.Key, c.PublicKey = prefix+".key", prefix+".pub"
	start := time.Now()
	res, err := release.Run(ctx, c)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.Log, "\ndry run done in %s: %d archives, %s, %s in %s; image %s\n",
		time.Since(start).Round(time.Second), len(res.Archives), release.ChecksumsName, release.NotesName, c.Dist, res.Image)
	return nil
}

// gitStamp is the stamp of the checked-out commit: version (default git
// describe), revision and commit time in UTC.
func gitStamp(ctx context.Context, root, version string) (release.Stamp, error) {
	git := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out)), nil
	}
	var s release.Stamp
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

// keyFile returns the cosign key file $COSIGN_KEY names. A CI secret holds
// the PEM itself: that is written to a private temporary file, which
// cleanup removes.
func keyFile(v string) (path string, cleanup func(), err error) {
	cleanup = func() {}
	switch {
	case v == "":
		return "", cleanup, errors.New("$COSIGN_KEY is not set: a cosign private key file, or its PEM")
	case !strings.Contains(v, "-----BEGIN"):
		return v, cleanup, nil
	}
	f, err := os.CreateTemp("", "cosign-*.key") // mode 0600
	if err != nil {
		return "", cleanup, err
	}
	defer f.Close()
	if _, err := f.WriteString(v); err != nil {
		os.Remove(f.Name())
		return "", cleanup, err
	}
	return f.Name(), func() { os.Remove(f.Name()) }, nil
}
