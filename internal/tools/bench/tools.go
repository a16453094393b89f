package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Pinned peer versions.
const (
	craneVersion  = "v0.22.1"
	regctlVersion = "v0.11.7"
)

// crane is go-containerregistry's CLI.
type crane struct{ cmdTool }

func (*crane) Name() string    { return "crane" }
func (*crane) Version() string { return craneVersion }

func (t *crane) Install(ctx context.Context, binDir string) (err error) {
	t.bin, err = goInstall(ctx, binDir, "github.com/google/go-containerregistry/cmd/crane",
		"github.com/google/go-containerregistry", craneVersion)
	return err
}

// Configure does nothing: crane takes --insecure on every command.
func (*crane) Configure(context.Context, string) error { return nil }

func (t *crane) Run(ctx context.Context, o op) error {
	switch o := o.(type) {
	case indexCreate:
		// With no base index, crane index append starts from an empty OCI index.
		args := []string{"--insecure", "index", "append", "-t", o.Target}
		for _, s := range o.Sources {
			args = append(args, "-m", s)
		}
		_, err := t.exec(ctx, args...)
		return err
	case rebaseIndex:
		return t.rebase(ctx, o)
	case promoteIndex:
		// crane copies the index and its children, nothing that refers to them.
		_, err := t.exec(ctx, "--insecure", "copy", o.Source, o.Target)
		return err
	}
	return fmt.Errorf("crane %s: %w", o.opName(), errUnsupported)
}

// regctl is regclient's CLI.
type regctl struct{ cmdTool }

func (*regctl) Name() string    { return "regctl" }
func (*regctl) Version() string { return regctlVersion }

func (t *regctl) Install(ctx context.Context, binDir string) (err error) {
	t.bin, err = goInstall(ctx, binDir, "github.com/regclient/regclient/cmd/regctl",
		"github.com/regclient/regclient", regctlVersion)
	return err
}

// Configure writes the registry's TLS setting into regctl's config in the
// tool's private HOME, as a user would.
func (t *regctl) Configure(ctx context.Context, host string) error {
	_, err := t.exec(ctx, "registry", "set", host, "--tls", "disabled")
	return err
}

func (t *regctl) Run(ctx context.Context, o op) error {
	switch o := o.(type) {
	case indexCreate:
		args := []string{"index", "create", o.Target}
		for _, s := range o.Sources {
			args = append(args, "--ref", s)
		}
		// Without --platform regctl nests an index source as one child;
		// with it, it takes the matching children (single images ignore it).
		for _, p := range o.Platforms {
			args = append(args, "--platform", p)
		}
		_, err := t.exec(ctx, args...)
		return err
	case rebaseIndex:
		return t.rebase(ctx, o)
	case promoteIndex:
		// --referrers copies the referrers (through the fallback tag here),
		// --digest-tags the cosign sha256-<digest>.sig style tags.
		_, err := t.exec(ctx, "image", "copy", "--referrers", "--digest-tags", o.Source, o.Target)
		return err
	}
	return fmt.Errorf("regctl %s: %w", o.opName(), errUnsupported)
}

// imgctl is this checkout, built into the bench bin directory, or with
// baseline set, the commit baseline of the same repository: the "before"
// row of a change measured in the same run as the "after".
type imgctl struct {
	cmdTool
	root     string // module root to build from
	verify   bool   // leave imgctl's post-push verification on
	baseline string // a git revision to build instead of the checkout
	version  string
}

func (t *imgctl) Name() string {
	if t.baseline != "" {
		return "imgctl@" + t.baseline
	}
	if t.verify {
		return "imgctl+verify"
	}
	return "imgctl"
}

func (t *imgctl) Version() string { return t.version }

// Install builds imgctl from the checkout, or from the baseline commit
// exported with git archive; the Go build cache makes repeats cheap.
func (t *imgctl) Install(ctx context.Context, binDir string) error {
	t.bin, t.version = filepath.Join(binDir, "imgctl"), checkoutVersion(ctx, t.root)
	dir := t.root
	if t.baseline != "" {
		var err error
		if dir, err = exportRevision(ctx, t.root, t.baseline, binDir); err != nil {
			return err
		}
		t.bin, t.version = filepath.Join(binDir, "imgctl-"+slug(t.baseline)), "commit "+t.baseline
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", t.bin, "./cmd/imgctl")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building imgctl %s: %w: %s", t.version, err, tail(string(out), 5))
	}
	return nil
}

// exportRevision writes the tree of rev (a commit of the repository at
// root) into a fresh directory under binDir with git archive, and returns it.
func exportRevision(ctx context.Context, root, rev, binDir string) (string, error) {
	dir := filepath.Join(binDir, "src-"+slug(rev))
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	archive := exec.CommandContext(ctx, "git", "-C", root, "archive", "--format=tar", rev)
	untar := exec.CommandContext(ctx, "tar", "-x", "-C", dir)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return "", err
	}
	untar.Stdin = pipe
	var errb bytes.Buffer
	archive.Stderr = &errb
	if err := untar.Start(); err != nil {
		return "", err
	}
	aerr := archive.Run()
	if err := errors.Join(aerr, untar.Wait()); err != nil {
		return "", fmt.Errorf("exporting imgctl %s: %w: %s", rev, err, tail(errb.String(), 3))
	}
	return dir, nil
}

// Configure does nothing: imgctl uses plain HTTP for 127.0.0.1 by contract.
func (*imgctl) Configure(context.Context, string) error { return nil }

func (t *imgctl) Run(ctx context.Context, o op) error {
	args, err := imgctlArgs(o, t.verify)
	if err != nil {
		return err
	}
	_, err = t.exec(ctx, args...)
	// Exit 1 means the index was pushed and verify reported findings (such
	// as no ltsc2022 variant in a merge of ltsc2025 only): the work is done.
	if exit := (*exec.ExitError)(nil); t.verify && errors.As(err, &exit) && exit.ExitCode() == 1 {
		return nil
	}
	return err
}

// imgctlArgs is the imgctl command line for o. Without verify it passes
// --no-verify, since the peers do not check what they pushed either.
func imgctlArgs(o op, verify bool) ([]string, error) {
	switch o := o.(type) {
	case indexCreate:
		args := []string{"index", "create"}
		if !verify {
			args = append(args, "--no-verify")
		}
		args = append(args, "-t", o.Target)
		return append(args, o.Sources...), nil
	case rebaseIndex:
		args := []string{"rebase"}
		if !verify {
			args = append(args, "--no-verify")
		}
		return append(args, o.Source, "-t", o.Target), nil
	case promoteIndex:
		return []string{"promote", "--policy", o.Policy, "--key", o.Key, o.Source, o.Target}, nil
	}
	return nil, fmt.Errorf("imgctl %s: %w", o.opName(), errUnsupported)
}

// checkoutVersion describes the checkout: the commit and whether the tree is dirty.
func checkoutVersion(ctx context.Context, root string) string {
	out, err := exec.CommandContext(ctx, "git", "-C", root, "describe", "--always", "--dirty").Output()
	if err != nil {
		return "devel"
	}
	return "checkout " + strings.TrimSpace(string(out))
}
