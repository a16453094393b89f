// Command releasedryrun is `make release-dry-run`: imgctl's release
// (internal/tools/release's Run, as internal/tools/release/cmd/release runs it) made against
// buildtest.StartLocal (an in-process registry, synthetic bases, a local
// buildkitd) with a throw-away cosign key. It links test harnesses, so it
// is one (docs/architecture.md); the release command does not.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/imgctl/imgctl/cmd/imgctl/cli"
	"github.com/imgctl/imgctl/internal/testing/buildtest"
	"github.com/imgctl/imgctl/internal/tools/release"
)

func main() {
	release.Command("release dry run", cli.Execute, nil, dryRun)
}

// dryRun runs the release against buildtest.StartLocal with a key pair
// made for this run.
func dryRun(ctx context.Context, c release.Config) (err error) {
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
