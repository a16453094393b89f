package rebase

import (
	"errors"

	"github.com/imgctl/imgctl/internal/rawmanifest"
)

// Sentinel errors, checked with errors.Is.
var (
	// ErrNoBase is returned for a variant with no base.name annotation and
	// no base given for its OS.
	ErrNoBase = errors.New("no base image known")
	// ErrNoBaseDigest is returned when a stale variant has no base.digest
	// annotation, so the layers of its old base cannot be told apart.
	ErrNoBaseDigest = errors.New("no base.digest annotation: cannot tell the old base's layers")
	// ErrBaseMismatch is returned when a variant's layers, diff_ids or
	// history do not start with those of its stated old base.
	ErrBaseMismatch = errors.New("image does not start with its stated base")
	// ErrNoPlatformMatch is returned when a base has no image for a
	// variant's OS and architecture.
	ErrNoPlatformMatch = errors.New("base has no image for the platform")
	// ErrBuildChange is returned when a Windows variant's base moved to
	// another build and AllowBuildChange is not set (the CLI names its
	// flag).
	ErrBuildChange = errors.New("base is a different Windows build")
	// ErrBuilderID is returned for an Options.BuilderID that is not an
	// absolute URI, as SLSA requires of runDetails.builder.id.
	ErrBuilderID = errors.New("builder id must be an absolute URI")
	// ErrStage is returned for an Options.Stage outside the target's
	// repository.
	ErrStage = errors.New("the stage tag must be in the target's repository")
	// ErrMediaType is returned for a base layer media type that has no
	// equivalent in the image's media type family, or an unknown one.
	ErrMediaType = rawmanifest.ErrMediaType
)
