// Command lifecycle runs the life of one image with imgctl, end to end on
// one machine: on two in-process registries (CI and release, the second
// with the referrers API) and a real buildkitd (bin/buildkitd, runc
// worker) that it starts, from the synthetic bases of internal/testing/buildtest,
// it builds examples/hello for linux/amd64, linux/arm64 and windows/amd64
// (ltsc2022 and ltsc2025) with provenance, signs it, promotes it under a
// policy, then lives through the next Patch Tuesday: a new ltsc2025 base
// revision appears under the same tag, imgctl bases reports the image
// stale, imgctl rebase moves it without a rebuild, imgctl verify --nodes
// checks it against a sample cluster (examples/nodes.json), and the
// rebased index is signed and promoted to a new release tag. Each step
// prints what changed, read from imgctl's own JSON output (inspect,
// resolve, verify). The story is package story, run here with the CLI in
// process (cli.Execute); the CLI's end-to-end test runs it too.
// `make demo-lifecycle` runs it.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/imgctl/imgctl/cmd/imgctl/cli"
	"github.com/imgctl/imgctl/internal/tools/demo/lifecycle/story"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	_, err := story.Run(ctx, os.Stdout, story.Config{Imgctl: cli.Execute, Version: "1.0"})
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo-lifecycle:", err)
		os.Exit(1)
	}
}
