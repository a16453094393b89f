package registry

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"syscall"

	gtransport "github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/imgctl/imgctl/registry/transport"
)

// Sentinel errors of every registry operation, checked with errors.Is. The
// CLI maps them to exit codes in one place; library packages return them
// wrapped and declare none of their own for the same condition.
var (
	// ErrInvalidReference is returned for an image reference imgctl cannot
	// read.
	ErrInvalidReference = errors.New("invalid image reference")
	// ErrPlainHTTP is returned for a plain-HTTP request to a registry that
	// is not on loopback, without --insecure (transport.ErrPlainHTTP).
	ErrPlainHTTP = transport.ErrPlainHTTP
	// ErrTagExists is returned when a tag to publish exists at another
	// digest and overwriting was not asked for (like
	// crane.ErrRefusingToClobberExistingTag), and when the registry itself
	// refuses to change a tag it holds immutable or locked (see
	// ImmutableTagError; transport.ErrTagExists).
	ErrTagExists = transport.ErrTagExists
	// ErrTagsRepository is returned by PublishTags for tags in more than
	// one repository.
	ErrTagsRepository = errors.New("every tag must be in one repository")
	// ErrTagChanged is returned by Publish when the tag, read back right
	// after imgctl's PUT, no longer holds imgctl's digest: another writer
	// tagged it in between (see Publish for what this does and does not
	// catch).
	ErrTagChanged = errors.New("tag changed concurrently")
	// ErrUnexpectedNotFound is returned for a 404 that is not a registry's
	// "manifest unknown" or "blob unknown": an HTML page (a proxy or load
	// balancer that does not route the request) or an error code that
	// says something else, such as NAME_UNKNOWN. imgctl never takes such
	// an answer for "absent" (transport.ErrUnexpectedNotFound).
	ErrUnexpectedNotFound = transport.ErrUnexpectedNotFound
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

// ErrManifestTooLarge is returned for a manifest over MaxManifestSize
// (transport.ErrManifestTooLarge).
var ErrManifestTooLarge = transport.ErrManifestTooLarge

// DigestMismatchError is returned when content fetched by digest does not
// hash to that digest (transport.DigestMismatchError).
type DigestMismatchError = transport.DigestMismatchError

// ImmutableTagError is a registry's refusal to change a tag it holds
// immutable or locked; it is ErrTagExists for errors.Is
// (transport.ImmutableTagError).
type ImmutableTagError = transport.ImmutableTagError

// MaxManifestSize is the largest manifest or index imgctl reads, the limit
// containerd and most registries apply (transport.MaxManifestSize).
const MaxManifestSize = transport.MaxManifestSize

// Retry settings (see package transport). Production uses the defaults;
// tests shorten them through the environment.
const (
	// DefaultRetryBase is the first delay between retries.
	DefaultRetryBase = transport.DefaultRetryBase
	// DefaultRetryAfterMax caps the wait a Retry-After header asks for.
	DefaultRetryAfterMax = transport.DefaultRetryAfterMax
	// EnvRetryBase overrides DefaultRetryBase with a Go duration ("10ms").
	EnvRetryBase = transport.EnvRetryBase
	// EnvRetryAfterMax overrides DefaultRetryAfterMax with a Go duration.
	EnvRetryAfterMax = transport.EnvRetryAfterMax
)

// IsNotFound reports whether err is a registry's 404: that the manifest or
// blob is unknown. Every request goes through the client's transport,
// which turns a 404 that does not say so into ErrUnexpectedNotFound (see
// transport.notFound), so a *gtransport.Error with status 404 is the registry's own
// "absent".
func IsNotFound(err error) bool {
	var terr *gtransport.Error
	return errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound
}

// IsRegistryError reports whether err is a failure to talk to a registry
// rather than a judgement of what it served: a registry's error answer (a
// *gtransport.Error of any status, 404 included), a network or transport
// failure (a *url.Error from the HTTP client, a net.Error, a cut
// connection), content that does not match its digest, an oversized
// manifest, a refused plain-HTTP request, or a cancelled context. The CLI
// exits 2 for these; a caller that judges content (sign's signature check)
// returns them as errors instead of findings.
func IsRegistryError(err error) bool {
	if err == nil {
		return false
	}
	var (
		terr *gtransport.Error
		nerr net.Error
		dm   *DigestMismatchError
	)
	switch {
	case errors.As(err, &terr), errors.As(err, &nerr), errors.As(err, &dm):
		return true
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return true
	case errors.Is(err, ErrManifestTooLarge), errors.Is(err, ErrPlainHTTP), errors.Is(err, ErrUnexpectedNotFound):
		return true
	}
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, net.ErrClosed)
}
