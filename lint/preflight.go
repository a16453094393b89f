package lint

import (
	"fmt"
	"io"

	"github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/findings"
)

// Options select what Preflight checks the Dockerfile for.
type Options struct {
	// Platforms are the target platforms; empty means the build platform, linux/amd64.
	Platforms []v1.Platform
	// BuildArgs override ARG defaults, as --build-arg does.
	BuildArgs map[string]string
	// Target is the stage to build; empty means the last stage.
	Target string
	// WindowsReleases is how many Windows releases the build makes from
	// this Dockerfile (imgctl build --windows), one solve each. With more
	// than one, every Windows stage must take its base from the
	// WindowsBaseArg build arg, the only thing their solves differ in.
	WindowsReleases int
	// Resolve, when set, reads the platforms of a Windows base whose
	// reference names no release (a digest, or a tag such as latest), so
	// that its os.version can be compared with the release being built.
	// Its errors are returned by Preflight. nil leaves such bases alone.
	Resolve BaseResolver
}

// Preflight parses a Dockerfile with BuildKit's parser, resolves the stage graph
// for every target platform the way BuildKit does, and reports the problems that
// would break a multi-OS build on a Linux builder. file names the Dockerfile in
// findings and errors. Findings are sorted by line.
func Preflight(r io.Reader, file string, opts Options) ([]findings.Finding, error) {
	dt, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	df, err := parseDockerfile(dt, file)
	if err != nil {
		return nil, err
	}
	out := df.findings
	for _, p := range df.targets(opts) {
		g, err := df.resolve(p, opts)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrInvalidDockerfile, file, err)
		}
		out = append(out, windowsStageFindings(g, file, p, df.skip)...)
		fs, err := windowsBaseFindings(g, file, p, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, fs...)
	}
	return sortFindings(out), nil
}
