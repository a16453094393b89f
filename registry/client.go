package registry

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
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

// DefaultJobs bounds concurrent manifest and blob transfers when WithJobs
// is not given.
const DefaultJobs = 4

// Client is imgctl's one way to talk to registries, for one command run.
// Every request of the run goes through one guarded, retrying transport
// (see RoundTripper), and each registry is pinged and, for token auth,
// asked for a token once, with the scopes declared up front (see Scope and
// Transport). A Client is safe for concurrent use.
type Client struct {
	insecure      bool
	keychain      authn.Keychain
	base          http.RoundTripper
	jobs          int
	retryBase     time.Duration
	retryAfterMax time.Duration
	log           *slog.Logger

	requests atomic.Int64
	once     sync.Once
	rt       http.RoundTripper // guardTransport over base
	retrying http.RoundTripper // rt with the retry policy

	mu     sync.Mutex
	scopes map[string][]string          // by registry, as declared with Scope
	auth   map[string]name.Repository   // by registry: whose credentials to use
	rts    map[string]*sessionRT        // by registry: the authenticated transport
	refs   map[string]*referrersSupport // by registry: whether it serves the referrers API
}

// Option configures a Client.
type Option func(*Client)

// WithKeychain resolves credentials with kc instead of
// authn.DefaultKeychain (the Docker config and its credential helpers).
func WithKeychain(kc authn.Keychain) Option { return func(c *Client) { c.keychain = kc } }

// WithInsecure allows plain HTTP and unverified TLS for registries that are
// not on loopback (loopback registries are always reached over plain HTTP).
func WithInsecure(insecure bool) Option { return func(c *Client) { c.insecure = insecure } }

// WithTransport sets the base transport under imgctl's guard and retries;
// tests use it to count requests and inject faults. The default is a clone
// of remote.DefaultTransport.
func WithTransport(rt http.RoundTripper) Option { return func(c *Client) { c.base = rt } }

// WithJobs bounds concurrent manifest and blob transfers; n <= 0 means
// DefaultJobs.
func WithJobs(n int) Option { return func(c *Client) { c.jobs = n } }

// WithRetryBase sets the first delay between retries of a transient
// failure; 0 means IMGCTL_RETRY_BASE or DefaultRetryBase.
func WithRetryBase(d time.Duration) Option { return func(c *Client) { c.retryBase = d } }

// WithRetryAfterMax caps how long a Retry-After header makes a request
// wait; 0 means IMGCTL_RETRY_AFTER_MAX or DefaultRetryAfterMax.
func WithRetryAfterMax(d time.Duration) Option { return func(c *Client) { c.retryAfterMax = d } }

// WithLogger receives the client's debug logs; nil discards.
func WithLogger(l *slog.Logger) Option { return func(c *Client) { c.log = l } }

// New returns a Client for one command run.
func New(opts ...Option) *Client {
	c := &Client{scopes: map[string][]string{}, auth: map[string]name.Repository{}, rts: map[string]*sessionRT{}}
	for _, o := range opts {
		o(c)
	}
	if c.keychain == nil {
		c.keychain = authn.DefaultKeychain
	}
	if c.log == nil {
		c.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return c
}

// Or returns c, or a new Client with the defaults when c is nil: library
// options take a Client and work without one.
func Or(c *Client) *Client {
	if c == nil {
		return New()
	}
	return c
}

// Requests returns how many HTTP requests this client has sent.
func (c *Client) Requests() int64 { return c.requests.Load() }

// Jobs returns the bound on concurrent transfers.
func (c *Client) Jobs() int {
	if c.jobs <= 0 {
		return DefaultJobs
	}
	return c.jobs
}

// Insecure reports whether plain HTTP and unverified TLS are allowed off
// loopback (--insecure), for handing the same rule to a builder.
func (c *Client) Insecure() bool { return c.insecure }

// Logger returns the client's logger.
func (c *Client) Logger() *slog.Logger { return c.log }

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

// ParseReference parses a tag or digest reference with the client's
// plain-HTTP rule.
func (c *Client) ParseReference(s string) (name.Reference, error) {
	ref, err := name.ParseReference(strings.TrimSpace(s), c.NameOptions()...)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %w", ErrInvalidReference, s, err)
	}
	return ref, nil
}

// NameOptions are the options for parsing references (annotations, flags)
// under the client's plain-HTTP rule.
func (c *Client) NameOptions() []name.Option {
	if c.insecure {
		return []name.Option{name.Insecure}
	}
	return nil
}

// Remote returns go-containerregistry options for calls on repo through
// the registry's shared, authenticated transport. It is how cosign's
// registry code and go-containerregistry's Puller and Pusher reach a
// registry: no other package builds remote options of its own.
func (c *Client) Remote(ctx context.Context, repo name.Repository) ([]remote.Option, error) {
	rt, err := c.Transport(ctx, repo)
	if err != nil {
		return nil, err
	}
	return []remote.Option{remote.WithContext(ctx), remote.WithTransport(rt), remote.WithJobs(c.Jobs())}, nil
}

// RoundTripper returns the client's unauthenticated transport: it refuses
// plain HTTP to registries off loopback without --insecure, retries
// transient failures with a bounded backoff, honours Retry-After within a
// cap, reads manifests and small blobs whole (so that a connection cut
// mid-body is retried), refuses manifests over MaxManifestSize and checks
// content fetched by digest. Every request shows in Requests.
func (c *Client) RoundTripper() http.RoundTripper {
	c.once.Do(c.init)
	return c.retrying
}

func (c *Client) init() {
	c.rt = c.newTransport()
	c.retrying = newRetry(c.rt, c.backoff())
}

func (c *Client) newTransport() http.RoundTripper {
	base := c.base
	if base == nil {
		t := remote.DefaultTransport.(*http.Transport).Clone()
		if c.insecure {
			t.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // asked for with --insecure
		}
		base = t
	}
	return &guardTransport{next: base, n: &c.requests, insecure: c.insecure, retryAfterMax: c.retryAfterMaxValue()}
}
