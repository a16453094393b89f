package build

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/platform"
)

// ErrBaseNotFound is returned (wrapped) when a base image has no manifest
// for the platform being built.
var ErrBaseNotFound = errors.New("base image has no manifest for the platform")

// ErrBaseMismatch is returned when a Windows variant came out with an
// os.version of another release than the one it was built for.
var ErrBaseMismatch = errors.New("windows variant built from the base of another release")

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

// pickBase picks the manifest for p from a fetched base reference: the
// image itself (its os.version, in its config, is checked after the solve:
// checkBuilt), or the index child of p's platform (for Windows with an
// os.version, the same build).
func pickBase(desc *remote.Descriptor, ref name.Reference, p v1.Platform) (ResolvedBase, error) {
	rb := ResolvedBase{Name: ref.Name(), Digest: desc.Digest, top: desc.Digest}
	if desc.MediaType.IsImage() {
		return rb, nil
	}
	im, err := v1.ParseIndexManifest(bytes.NewReader(desc.Manifest))
	if err != nil {
		return ResolvedBase{}, fmt.Errorf("reading base %s: %w", ref, err)
	}
	for _, d := range im.Manifests {
		if d.Platform != nil && platform.SameBuild(p, *d.Platform) {
			rb.Digest, rb.OSVersion = d.Digest, d.Platform.OSVersion
			return rb, nil
		}
	}
	return ResolvedBase{}, fmt.Errorf("%w: %s for %s", ErrBaseNotFound, ref, platform.Format(p))
}
