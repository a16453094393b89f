package transport

import (
	"errors"
	"fmt"
)

// The sentinel errors the transport returns, checked with errors.Is.
// Package registry re-exports each as the same variable; callers name
// them there.
var (
	// ErrPlainHTTP is returned for a plain-HTTP request to a registry that
	// is not on loopback, without --insecure.
	ErrPlainHTTP = errors.New("refusing plain HTTP to a registry that is not on loopback")
	// ErrTagExists is returned when a tag to publish exists at another
	// digest and overwriting was not asked for (like
	// crane.ErrRefusingToClobberExistingTag), and when the registry itself
	// refuses to change a tag it holds immutable or locked (see
	// ImmutableTagError).
	ErrTagExists = errors.New("refusing to overwrite existing tag")
	// ErrUnexpectedNotFound is returned for a 404 that is not a registry's
	// "manifest unknown" or "blob unknown": an HTML page (a proxy or load
	// balancer that does not route the request) or an error code that
	// says something else, such as NAME_UNKNOWN. imgctl never takes such
	// an answer for "absent" (see notFound).
	ErrUnexpectedNotFound = errors.New("unexpected 404, not a registry's manifest or blob unknown")
	// ErrManifestTooLarge is returned for a manifest over MaxManifestSize.
	ErrManifestTooLarge = errors.New("manifest too large")
)

// DigestMismatchError is returned when content fetched by digest does not
// hash to that digest. It is temporary: a retry may reach a healthy replica.
type DigestMismatchError struct {
	// URL is the redacted URL of the request; Want and Got the digests.
	URL, Want, Got string
}

// Error implements error.
func (e *DigestMismatchError) Error() string {
	return fmt.Sprintf("content does not match its digest %s: got %s", e.Want, e.Got)
}

// Temporary reports that the request is worth a retry.
func (e *DigestMismatchError) Temporary() bool { return true }
