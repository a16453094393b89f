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

	requests atomic.Int64
	once     sync.Once
	rt       http.RoundTripper
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
		remote.WithTransport(o.RoundTripper()),
		remote.WithUserAgent("imgctl"),
		remote.WithRetryBackoff(remote.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.1, Steps: 5, Cap: 5 * time.Second}),
		remote.WithRetryStatusCodes(http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
			http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout),
	}
	if o.Jobs > 0 {
		opts = append(opts, remote.WithJobs(o.Jobs))
	}
	return opts
}

// RoundTripper returns this run's base transport: it counts requests and
// refuses plain HTTP to registries off loopback without --insecure. Clients
// that talk to a registry directly (index's one-POST mounts) use it so that
// their requests obey the same rules and show in Requests.
func (o *Options) RoundTripper() http.RoundTripper {
	o.once.Do(func() { o.rt = o.newTransport() })
	return o.rt
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
	return countingTransport{next: base, n: &o.requests, insecure: o.Insecure}
}

// ErrPlainHTTP is returned for a plain-HTTP request to a registry that is
// not on loopback, without --insecure.
var ErrPlainHTTP = errors.New("refusing plain HTTP to a registry that is not on loopback (use --insecure)")

// countingTransport counts requests and enforces the plain-HTTP rule:
// go-containerregistry falls back to HTTP for private (RFC 1918) addresses
// too, which imgctl allows only for loopback or with --insecure.
type countingTransport struct {
	next     http.RoundTripper
	n        *atomic.Int64
	insecure bool
}

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Scheme == "http" && !c.insecure && !IsLoopback(r.URL.Host) {
		return nil, fmt.Errorf("%s: %w", r.URL.Host, ErrPlainHTTP)
	}
	c.n.Add(1)
	return c.next.RoundTrip(r)
}
