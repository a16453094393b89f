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

// parseEngines reads --engine values (each a profile name or ENGINE@VERSION)
// into profiles. A deprecated name works with a warning on stderr; the same
// profile named twice, however spelled, is a usage error.
func parseEngines(values []string, stderr io.Writer) ([]platform.Engine, error) {
	var out []platform.Engine
	seen := map[string]string{}
	for _, v := range values {
		e, deprecated, err := platform.ParseEngine(v)
		if err != nil {
			return nil, fmt.Errorf("%w: --engine: %w", ErrUsage, err)
		}
		if deprecated != "" {
			fmt.Fprintln(stderr, "warning:", deprecated)
		}
		if prev, ok := seen[e.Name()]; ok {
			return nil, fmt.Errorf("%w: --engine %s and %s are the same profile (%s): name it once", ErrUsage, prev, v, e.Name())
		}
		seen[e.Name()] = v
		out = append(out, e)
	}
	return out, nil
}
