package index

import "errors"

// Sentinel errors, checked with errors.Is.
var (
	// ErrDuplicatePlatform is returned when two different manifests have
	// the same platform and PreferNewest is not set.
	ErrDuplicatePlatform = errors.New("duplicate platform")
	// ErrTagExists is returned when the target tag exists and Force is not
	// set (like crane.ErrRefusingToClobberExistingTag).
	ErrTagExists = errors.New("refusing to overwrite existing tag")
	// ErrNoMatch is returned by Remove when no entry matches a platform.
	ErrNoMatch = errors.New("no entry matches the platform")
	// ErrNoSources is returned when there is nothing to merge.
	ErrNoSources = errors.New("no sources")
	// ErrUnsupportedMediaType is returned for a source or child that is
	// neither an image manifest nor an index.
	ErrUnsupportedMediaType = errors.New("unsupported media type")
	// ErrNotAnIndex is returned by Remove when the source is a single image.
	ErrNotAnIndex = errors.New("not an index")
)
