package build

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/platform"
)

// ErrBaseNotFound is returned (wrapped) when a base image has no manifest
// for the platform being built.
var ErrBaseNotFound = errors.New("base image has no manifest for the platform")

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
func FinalBases(dockerfile []byte, file string, opts PreflightOptions) ([]FinalBase, error) {
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

// ResolvedBase is a base image pinned for one platform.
type ResolvedBase struct {
	// Name is the fully qualified reference, e.g. index.docker.io/library/alpine:3.
	Name string
	// Digest is the platform manifest's digest (a child's, when Name is an index).
	Digest v1.Hash
	// OSVersion is the manifest's os.version (Windows), from its descriptor or config.
	OSVersion string

	top v1.Hash // what Name points at: Digest, or the index holding it
}

// ResolveBase finds the manifest of ref for platform p: the image itself,
// or the index child whose platform matches (for Windows, the same build
// when p has an os.version; else the first windows/arch child).
func ResolveBase(ctx context.Context, ref name.Reference, p v1.Platform, opts ...remote.Option) (ResolvedBase, error) {
	opts = append([]remote.Option{remote.WithContext(ctx)}, opts...)
	desc, err := remote.Get(ref, opts...)
	if err != nil {
		return ResolvedBase{}, fmt.Errorf("resolving base %s: %w", ref, err)
	}
	return pickBase(desc, ref, p, true)
}

// pickBase picks the manifest for p from a fetched base reference. An
// image's os.version is in its config, read only with readConfig (one
// more request); without it OSVersion stays "" for an image.
func pickBase(desc *remote.Descriptor, ref name.Reference, p v1.Platform, readConfig bool) (ResolvedBase, error) {
	rb := ResolvedBase{Name: ref.Name(), Digest: desc.Digest, top: desc.Digest}
	if desc.MediaType.IsImage() {
		if !readConfig {
			return rb, nil
		}
		img, err := desc.Image()
		if err == nil {
			var cf *v1.ConfigFile
			if cf, err = img.ConfigFile(); err == nil {
				rb.OSVersion = cf.OSVersion
			}
		}
		if err != nil {
			return ResolvedBase{}, fmt.Errorf("reading base %s: %w", ref, err)
		}
		return rb, nil
	}
	im, err := v1.ParseIndexManifest(bytes.NewReader(desc.Manifest))
	if err != nil {
		return ResolvedBase{}, fmt.Errorf("reading base %s: %w", ref, err)
	}
	for _, d := range im.Manifests {
		if d.Platform != nil && baseMatches(*d.Platform, p) {
			rb.Digest, rb.OSVersion = d.Digest, d.Platform.OSVersion
			return rb, nil
		}
	}
	return ResolvedBase{}, fmt.Errorf("%w: %s for %s", ErrBaseNotFound, ref, platform.Format(p))
}

// baseMatches compares os, architecture, variant (normalised) and, for
// Windows with a wanted os.version, the build: platform.SameBuild.
func baseMatches(have, want v1.Platform) bool {
	return platform.SameBuild(want, have)
}
