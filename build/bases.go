package build

import (
	"errors"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// ErrBaseNotFound is returned (wrapped) when a base image has no manifest
// for the platform being built.
var ErrBaseNotFound = errors.New("base image has no manifest for the platform")

// ErrBaseMismatch is returned when a Windows variant would be, or came
// out, built from the base of another release than its own.
var ErrBaseMismatch = errors.New("windows variant built from the base of another release")

// ResolvedBase is a base image pinned for one platform.
type ResolvedBase struct {
	// Name is the fully qualified reference, e.g. index.docker.io/library/alpine:3.
	Name string
	// Digest is what the base is pinned to and what the base.digest
	// annotation records: the digest Name pointed at when the builder
	// resolved it (an index, or an image), or, when the builder's platform
	// match would take a child of another Windows build from that index,
	// the child of the variant's build that imgctl chose instead.
	Digest v1.Hash
	// OSVersion is the os.version (Windows) of the base's config for the
	// platform, as the builder returned it.
	OSVersion string

	top  v1.Hash     // what Name pointed at: Digest, or the index holding it
	plat v1.Platform // the platform the Dockerfile frontend resolves the base for
}
