package buildtest

import (
	"fmt"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/platform"
)

// NextRevision returns osVersion with its revision one higher: the same
// Windows build's next monthly update.
func NextRevision(osVersion string) (string, error) {
	v, err := platform.ParseVersion(osVersion)
	if err != nil {
		return "", err
	}
	if !v.HasRevision {
		return "", fmt.Errorf("os.version %q has no revision", osVersion)
	}
	v.Revision++
	return v.String(), nil
}

// PushNextRevision is the next Patch Tuesday: it pushes to ref, a base tag
// such as Bases.Nanoserver2025, a nanoserver-like image one revision above
// osVersion (the same build), and returns the new os.version. Images built
// FROM ref are then stale: `imgctl bases` exits 1 and `imgctl rebase` moves
// them onto the new image.
func PushNextRevision(ref, osVersion string) (string, error) {
	next, img, err := nextRevisionImage(osVersion)
	if err != nil {
		return "", err
	}
	if err := push(ref, img); err != nil {
		return "", err
	}
	return next, nil
}

// nextRevisionImage returns NextRevision(osVersion) and a nanoserver-like
// image of that os.version.
func nextRevisionImage(osVersion string) (string, v1.Image, error) {
	next, err := NextRevision(osVersion)
	if err != nil {
		return "", nil, err
	}
	img, err := NanoserverLike(next)
	if err != nil {
		return "", nil, err
	}
	return next, img, nil
}

// RevisionTag returns the tag MCR gives a base revision beside its moving
// tags: ref's repository with the tag osVersion (10.0.BUILD.REV).
func RevisionTag(ref, osVersion string) (string, error) {
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		return "", fmt.Errorf("parsing reference %q: %w", ref, err)
	}
	return r.Context().Tag(osVersion).String(), nil
}

// TagRevision tags the image ref points at, of os.version osVersion, with
// its revision tag (RevisionTag), so that the repository is laid out like
// MCR's and `imgctl bases` can tell the variant's patch level.
func TagRevision(ref, osVersion string) error {
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		return fmt.Errorf("parsing reference %q: %w", ref, err)
	}
	desc, err := remote.Get(r)
	if err != nil {
		return fmt.Errorf("reading %s: %w", ref, err)
	}
	if err := remote.Tag(r.Context().Tag(osVersion), desc); err != nil {
		return fmt.Errorf("tagging %s as %s: %w", ref, osVersion, err)
	}
	return nil
}

// PushPatchTuesday is PushNextRevision with the new revision's config
// created at created (MCR builds a base some days before its Patch
// Tuesday), pushed under ref and under its revision tag.
func PushPatchTuesday(ref, osVersion string, created time.Time) (string, error) {
	next, img, err := nextRevisionImage(osVersion)
	if err != nil {
		return "", err
	}
	if img, err = mutate.CreatedAt(img, v1.Time{Time: created}); err != nil {
		return "", err
	}
	tag, err := RevisionTag(ref, next)
	if err != nil {
		return "", err
	}
	for _, r := range []string{tag, ref} {
		if err := push(r, img); err != nil {
			return "", err
		}
	}
	return next, nil
}
