package build

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/lint"
	"github.com/imgctl/imgctl/platform"
)

// ErrBaseNotFound is returned (wrapped) when a base image has no manifest
// for the platform being built.
var ErrBaseNotFound = errors.New("base image has no manifest for the platform")

// ErrBaseMismatch is returned when a Windows variant came out with an
// os.version of another release than the one it was built for.
var ErrBaseMismatch = errors.New("windows variant built from the base of another release")

// FinalBase is the image the final stage is built FROM, for one platform,
// as lint.FinalBases finds it in the Dockerfile. Plan.Bases holds one per
// platform of every variant, and resolveBases pins each. It is an alias so
// that the resolution and result code keep naming it here while lint owns
// the Dockerfile parsing.
type FinalBase = lint.FinalBase

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
// Windows with a wanted os.version, the build.
func baseMatches(have, want v1.Platform) bool {
	if !platform.SameOSArch(have, want) {
		return false
	}
	if want.OS != "windows" || want.OSVersion == "" {
		return true
	}
	hb, ok1 := platform.Build(have.OSVersion)
	wb, ok2 := platform.Build(want.OSVersion)
	return ok1 && ok2 && hb == wb
}
