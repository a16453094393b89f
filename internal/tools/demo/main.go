// Command demo runs imgctl's main job end to end on one machine: it starts a
// local registry (go-containerregistry's, in process) and a real buildkitd
// (bin/buildkitd, runc worker), seeds the base images the example needs
// (a golang image from this machine's Go toolchain, a distroless-like Linux
// base, nanoserver-like Windows bases for ltsc2022 and ltsc2025), builds
// examples/hello for linux/amd64, linux/arm64 and windows/amd64 (one variant
// per LTSC release) with imgctl build, then runs imgctl verify and imgctl
// inspect on the tag. `make demo` runs it.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/imgctl/imgctl/cmd/imgctl/cli"
	"github.com/imgctl/imgctl/internal/testing/buildtest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	root, err := buildtest.ModuleRoot()
	if err != nil {
		return err
	}
	reg, err := regtest.Start()
	if err != nil {
		return err
	}
	defer reg.Close()
	step("registry on %s", reg.Host())

	step("seeding base images (golang from %s, distroless-like, nanoserver-like ltsc2022/ltsc2025)", "this machine's Go toolchain")
	bases, err := buildtest.SeedBases(reg.Host())
	defer func() { _ = buildtest.RemoveLayerCache() }()
	if err != nil {
		return fmt.Errorf("seeding bases: %w", err)
	}

	step("starting buildkitd")
	d, err := buildtest.StartBuildkitd(ctx, buildtest.Options{InsecureRegistries: []string{reg.Host()}, StartTimeout: time.Minute})
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()

	tmp, err := os.MkdirTemp("", "imgctl-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	meta := filepath.Join(tmp, "metadata.json")
	tag := reg.Host() + "/demo/hello:1.0"
	for _, args := range [][]string{
		{"build", "--builder", d.Addr, "--progress", "plain",
			"--windows", "ltsc2022,ltsc2025",
			"--windows-base", "ltsc2022=" + bases.Nanoserver2022 + ",ltsc2025=" + bases.Nanoserver2025,
			"--build-arg", "GOLANG_IMAGE=" + bases.Golang, "--build-arg", "LINUX_BASE=" + bases.Distroless,
			"--build-arg", "VERSION=1.0",
			"-t", tag, "--metadata-file", meta, filepath.Join(root, "examples", "hello")},
		{"verify", tag, "--windows", "ltsc2022,ltsc2025", "--require-platform", "linux/amd64,linux/arm64", "--run-as-non-root"},
		{"resolve", tag, "--platform", "windows/amd64:10.0.20348"},
		{"resolve", tag, "--platform", "windows/amd64:10.0.26100"},
		{"inspect", tag},
	} {
		step("imgctl %s", args[0])
		if code := cli.Execute(ctx, args, os.Stdin, os.Stdout, os.Stderr); code != 0 {
			return fmt.Errorf("imgctl %s exited %d", args[0], code)
		}
	}
	b, err := os.ReadFile(meta)
	if err != nil {
		return err
	}
	step("metadata file for CI")
	fmt.Printf("%s\n", b)
	return nil
}

func step(format string, args ...any) {
	fmt.Printf("\n== "+format+"\n", args...)
}
