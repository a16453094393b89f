package rebase

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/registry"
)

// resolved is a base reference resolved for one platform.
type resolved struct {
	repo name.Repository
	// top is the digest the reference points at: an index or an image.
	top v1.Hash
	// desc is the image for the platform; its Platform is nil when a
	// single-image base has none in its config.
	desc v1.Descriptor
	// buildChange is set when the base has no image of the wanted Windows
	// build and desc is the newest of another build.
	buildChange bool
}

// resolve finds the image of ref for platform want: the index child of the
// same build (platform.SameBuild: os/arch/variant and, for Windows, the
// build; a Windows want without os.version takes a child without one), or
// the image ref names when its config has that platform. For Windows, when
// no child has the build, the newest child of another build is returned
// with buildChange set; the caller decides whether that is allowed.
func (s *session) resolve(ctx context.Context, ref name.Reference, want platform.Platform) (*resolved, error) {
	rd, err := s.get(ctx, ref)
	if err != nil {
		return nil, err
	}
	r := &resolved{repo: ref.Context(), top: rd.Digest}
	var cands []v1.Descriptor
	switch {
	case rd.MediaType.IsIndex():
		_, im, err := registry.ReadIndex(ref, rd)
		if err != nil {
			return nil, err
		}
		cands = im.Manifests
	default:
		img, err := asImage(r.repo, rd)
		if err != nil {
			return nil, err
		}
		cfg, err := s.config(ctx, img)
		if err != nil {
			return nil, err
		}
		d := rd.Descriptor
		d.Platform = cfg.file.Platform()
		cands = []v1.Descriptor{d}
	}
	// The base's current image for the variant is the first of its build:
	// the variant's own revision must not be preferred, or a variant whose
	// old revision is still listed would look current.
	byBuild := want
	if b, ok := platform.Build(want.OSVersion); ok && platform.Normalize(want).OS == "windows" {
		byBuild.OSVersion = fmt.Sprintf("10.0.%d", b)
	}
	d, same, ok := platform.BaseChild(cands, byBuild)
	change := !same
	if !ok {
		return nil, fmt.Errorf("%s: %w %s", ref, ErrNoPlatformMatch, platform.Format(want))
	}
	r.desc, r.buildChange = d, change
	return r, nil
}

// oldChild resolves a recorded base.digest to the image for want: the digest
// itself when it names an image, the child of the same build when it names
// an index (OCI allows either).
func (s *session) oldChild(ctx context.Context, repo name.Repository, d v1.Hash, want platform.Platform) (v1.Hash, error) {
	rd, err := s.get(ctx, repo.Digest(d.String()))
	if err != nil {
		return v1.Hash{}, err
	}
	if !rd.MediaType.IsIndex() {
		return rd.Digest, nil
	}
	_, im, err := registry.ReadIndex(repo.Digest(d.String()), rd)
	if err != nil {
		return v1.Hash{}, err
	}
	c, same, ok := platform.BaseChild(im.Manifests, want)
	if !ok || !same {
		return v1.Hash{}, fmt.Errorf("old base %s@%s: %w %s", repo, d, ErrNoPlatformMatch, platform.Format(want))
	}
	return c.Digest, nil
}
