// Command release makes an imgctl release with imgctl itself
// (internal/tools/release): `make release` runs it against the real registry,
// bases and builder. `make release-dry-run` runs the same release.Run
// from internal/tools/release/cmd/dryrun, a harness (an in-process registry,
// synthetic bases, a local buildkitd, a throw-away key), so that this
// command links no test harness.
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
	"os"
	"slices"
	"strings"

	"github.com/imgctl/imgctl/cmd/imgctl/cli"
	"github.com/imgctl/imgctl/internal/tools/release"
)

func main() {
	var repository, linuxBase, win2022, win2025 *string
	release.Command("release", cli.Execute, func(fs *flag.FlagSet) {
		repository = fs.String("repository", os.Getenv("IMAGE_REPOSITORY"), "image repository, e.g. registry.example.com/imgctl (real run)")
		linuxBase = fs.String("linux-base", "gcr.io/distroless/static:nonroot", "base of the Linux variants (real run)")
		win2022 = fs.String("windows-base-ltsc2022", "mcr.microsoft.com/windows/nanoserver:ltsc2022", "base of the ltsc2022 variant (real run)")
		win2025 = fs.String("windows-base-ltsc2025", "mcr.microsoft.com/windows/nanoserver:ltsc2025", "base of the ltsc2025 variant (real run)")
	}, func(ctx context.Context, c release.Config) error {
		if *repository == "" {
			return errors.New("-repository (or $IMAGE_REPOSITORY) is required")
		}
		if c.Targets != nil && !slices.Equal(c.Targets, release.Targets()) {
			return fmt.Errorf("-targets %v: a release ships every target (%v); -targets is for the dry run", c.Targets, release.Targets())
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
	})
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
