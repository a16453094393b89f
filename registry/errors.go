package registry

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// Sentinel errors of every registry operation, checked with errors.Is. The
// CLI maps them to exit codes in one place; library packages return them
// wrapped and declare none of their own for the same condition.
var (
	// ErrInvalidReference is returned for an image reference imgctl cannot
	// read.
	ErrInvalidReference = errors.New("invalid image reference")
	// ErrPlainHTTP is returned for a plain-HTTP request to a registry that
	// is not on loopback, without --insecure.
	ErrPlainHTTP = errors.New("refusing plain HTTP to a registry that is not on loopback (use --insecure)")
	// ErrTagExists is returned when a tag to publish exists at another
	// digest and overwriting was not asked for (like
	// crane.ErrRefusingToClobberExistingTag).
	ErrTagExists = errors.New("refusing to overwrite existing tag")
	// ErrNotAnIndex is returned when an operation needs an index and the
	// reference is a single manifest.
	ErrNotAnIndex = errors.New("not an index")
	// ErrUnsupportedMediaType is returned for a manifest that is neither
	// an image manifest nor an index.
	ErrUnsupportedMediaType = errors.New("unsupported media type")
	// ErrReferrersUnsupported is returned when an operation needs the OCI
	// 1.1 referrers API and the registry does not serve it.
	ErrReferrersUnsupported = errors.New("the registry does not serve the OCI referrers API")
)

// ErrManifestTooLarge is returned for a manifest over MaxManifestSize.
var ErrManifestTooLarge = errors.New("manifest too large")

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

// IsNotFound reports whether err is a registry's 404.
func IsNotFound(err error) bool {
	var terr *transport.Error
	return errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound
}
