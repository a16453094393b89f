package main

import (
	"context"
	"errors"
	"fmt"
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
	}
	return fmt.Errorf("regctl %s: %w", o.opName(), errUnsupported)
}

// imgctl is this checkout, built into the bench bin directory.
type imgctl struct {
	cmdTool
	root    string // module root to build from
	verify  bool   // leave imgctl's post-push verification on
	version string
}

func (t *imgctl) Name() string {
	if t.verify {
		return "imgctl+verify"
	}
	return "imgctl"
}

func (t *imgctl) Version() string { return t.version }

// Install builds imgctl from the checkout; the Go build cache makes repeats cheap.
func (t *imgctl) Install(ctx context.Context, binDir string) error {
	t.bin = filepath.Join(binDir, "imgctl")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", t.bin, "./cmd/imgctl")
	cmd.Dir = t.root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building imgctl: %w: %s", err, tail(string(out), 5))
	}
	t.version = checkoutVersion(ctx, t.root)
	return nil
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
