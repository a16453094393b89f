package lint

import (
	"fmt"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/platform"
)

// FinalBase is the image the final stage is built FROM, for one platform.
type FinalBase struct {
	// Platform is the target platform as given.
	Platform v1.Platform
	// StagePlatform is the platform the base is resolved for: the target,
	// or the FROM --platform of the stage.
	StagePlatform v1.Platform
	// Name is the base reference after ARG expansion; "" for scratch.
	Name string
	// Stage is the name of the stage whose FROM names the base.
	Stage string
	// Line is the line of that FROM.
	Line int
}

// FinalBases resolves the stage graph of a Dockerfile like Preflight does
// and returns, for every platform in opts, the image that the target stage
// ultimately builds FROM (following FROM other-stage chains).
func FinalBases(dockerfile []byte, file string, opts Options) ([]FinalBase, error) {
	df, err := parseDockerfile(dockerfile, file)
	if err != nil {
		return nil, err
	}
	var out []FinalBase
	for _, p := range df.targets(opts) {
		g, err := df.resolve(p, opts)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrInvalidDockerfile, file, err)
		}
		s := g.target
		for s.base != nil {
			s = s.base
		}
		fb := FinalBase{Platform: p, StagePlatform: platform.FromSpec(s.platform), Stage: s.name, Line: startLine(s.st.Location)}
		if !strings.EqualFold(s.baseName, "scratch") {
			fb.Name = s.baseName
		}
		out = append(out, fb)
	}
	return out, nil
}
