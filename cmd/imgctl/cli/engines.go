package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/imgctl/imgctl/platform"
)

// engineFlagHelp describes --engine for resolve and verify.
var engineFlagHelp = "engine: a profile (" + strings.Join(platform.EngineNames(), ", ") +
	"), or a release: containerd@VERSION, docker@VERSION, docker@VERSION+containerd-store"

// parseEngines reads --engine values with platform.ParseEngines, the
// parser a policy's engines go through too. A deprecated name works with a
// warning on stderr; the same profile named twice, however spelled, is a
// usage error.
func parseEngines(values []string, stderr io.Writer) ([]platform.Engine, error) {
	out, deprecated, err := platform.ParseEngines(values)
	if err != nil {
		return nil, fmt.Errorf("%w: --engine: %w", ErrUsage, err)
	}
	for _, d := range deprecated {
		fmt.Fprintln(stderr, "warning:", d)
	}
	return out, nil
}
