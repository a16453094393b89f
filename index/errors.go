package index

import "errors"

// Sentinel errors, checked with errors.Is. Registry conditions (a tag that
// exists, a source that is not an index, an unsupported media type) are
// the registry package's sentinels.
var (
	// ErrDuplicatePlatform is returned when two different manifests have
	// the same platform and PreferNewest is not set.
	ErrDuplicatePlatform = errors.New("duplicate platform")
	// ErrNoMatch is returned by Remove when no entry matches a platform.
	ErrNoMatch = errors.New("no entry matches the platform")
	// ErrNoSources is returned when there is nothing to merge.
	ErrNoSources = errors.New("no sources")
	// ErrBadPrepared is returned by PublishPrepared for a child whose
	// descriptor does not describe its manifest bytes.
	ErrBadPrepared = errors.New("prepared child does not match its descriptor")
)
