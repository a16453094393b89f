// Command demo runs imgctl's main job end to end on one machine: it starts a
// local registry, publishes a sample multi-OS index, then runs imgctl verify
// and imgctl inspect on it. `make demo` runs it.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/imgctl/imgctl/cmd/imgctl/cli"
	"github.com/imgctl/imgctl/internal/regtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	reg, err := regtest.Start()
	if err != nil {
		return err
	}
	defer reg.Close()
	fmt.Printf("== registry on %s\n", reg.Host())
	idx, err := regtest.MultiOSIndex()
	if err != nil {
		return err
	}
	ref, _, err := reg.PushTag("demo/hello:1.0", idx)
	if err != nil {
		return err
	}
	for _, args := range [][]string{
		{"verify", ref.String(), "--target", "ltsc2022,ltsc2025", "--require-platform", "linux/amd64,linux/arm64"},
		{"inspect", ref.String()},
	} {
		fmt.Printf("\n== imgctl %v\n", args)
		if code := cli.Execute(ctx, args, os.Stdin, os.Stdout, os.Stderr); code != 0 {
			return fmt.Errorf("imgctl %s exited %d", args[0], code)
		}
	}
	return nil
}
