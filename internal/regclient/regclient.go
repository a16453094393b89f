// Package regclient holds the registry connection settings every imgctl
// command shares: reference parsing with imgctl's plain-HTTP rule, auth from
// the Docker config and credential helpers, retries, and request counting.
package regclient

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// ErrInvalidReference is returned for an image reference imgctl cannot read.
var ErrInvalidReference = errors.New("invalid image reference")

// Options are the registry settings of one command run.
type Options struct {
	// Insecure allows plain HTTP and unverified TLS for registries that are
	// not on loopback.
	Insecure bool
	// Keychain resolves credentials; nil means authn.DefaultKeychain.
	Keychain authn.Keychain
	// Transport is the base transport; nil means a clone of
	// remote.DefaultTransport.
	Transport http.RoundTripper
	// Jobs bounds concurrent blob transfers; 0 means go-containerregistry's
	// default.
	Jobs int
	// RetryBase is the first delay between retries of a transient failure;
	// 0 means IMGCTL_RETRY_BASE or DefaultRetryBase.
	RetryBase time.Duration
	// RetryAfterMax caps how long a Retry-After header makes a request
	// wait; 0 means IMGCTL_RETRY_AFTER_MAX or DefaultRetryAfterMax.
	RetryAfterMax time.Duration

	requests atomic.Int64
	once     sync.Once
	rt       http.RoundTripper
	retrying http.RoundTripper
}

// Requests returns how many HTTP requests this Options' transport has made.
func (o *Options) Requests() int64 { return o.requests.Load() }

// IsLoopback reports whether a registry host is localhost or a loopback
// address, which imgctl reaches over plain HTTP without --insecure.
func IsLoopback(registry string) bool {
	host := registry
	if h, _, err := net.SplitHostPort(registry); err == nil {
		host = h
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// ParseReference parses a tag or digest reference.
func (o *Options) ParseReference(s string) (name.Reference, error) {
	var opts []name.Option
	if o.Insecure {
		opts = append(opts, name.Insecure)
	}
	ref, err := name.ParseReference(strings.TrimSpace(s), opts...)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %w", ErrInvalidReference, s, err)
	}
	return ref, nil
}

// Remote returns the go-containerregistry options for one call.
func (o *Options) Remote(ctx context.Context) []remote.Option {
	kc := o.Keychain
	if kc == nil {
		kc = authn.DefaultKeychain
	}
	opts := []remote.Option{
		remote.WithContext(ctx),
		remote.WithAuthFromKeychain(kc),
		remote.WithTransport(o.base()),
		remote.WithUserAgent("imgctl"),
		remote.WithRetryBackoff(o.backoff()),
		remote.WithRetryStatusCodes(retryStatusCodes...),
	}
	if o.Jobs > 0 {
		opts = append(opts, remote.WithJobs(o.Jobs))
	}
	return opts
}

// RoundTripper returns this run's transport for clients that talk to a
// registry directly (index's one-POST mounts), so that their requests obey
// the same rules as the Remote options' and show in Requests: it refuses
// plain HTTP to registries off loopback without --insecure, retries
// transient failures with the same bounded backoff, honours Retry-After
// within RetryAfterMax, reads manifests and small blobs whole (so that a
// connection cut mid-body is retried), refuses manifests over
// MaxManifestSize and checks content fetched by digest.
func (o *Options) RoundTripper() http.RoundTripper {
	o.once.Do(o.init)
	return o.retrying
}

// base is RoundTripper without the retries, for the Remote options:
// go-containerregistry adds its own retries with the same backoff.
func (o *Options) base() http.RoundTripper {
	o.once.Do(o.init)
	return o.rt
}

func (o *Options) init() {
	o.rt = o.newTransport()
	o.retrying = transport.NewRetry(o.rt, transport.WithRetryBackoff(o.backoff()),
		transport.WithRetryPredicate(retryable), transport.WithRetryStatusCodes(retryStatusCodes...))
}

func (o *Options) newTransport() http.RoundTripper {
	base := o.Transport
	if base == nil {
		t := remote.DefaultTransport.(*http.Transport).Clone()
		if o.Insecure {
			t.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // asked for with --insecure
		}
		base = t
	}
	return &guardTransport{next: base, n: &o.requests, insecure: o.Insecure, retryAfterMax: o.retryAfterMax()}
}
