// Command imgctl builds, merges, verifies and publishes multi-platform
// container images whose variants include Windows.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/imgctl/imgctl/cmd/imgctl/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Execute(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
