package registry

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/registry/transport"
)

// DefaultJobs bounds concurrent manifest and blob transfers when WithJobs
// is not given.
const DefaultJobs = 4

// Client is imgctl's one way to talk to registries, for one command run.
// Every request of the run goes through one transport.Session: one
// guarded, retrying transport (see RoundTripper), and each registry is
// pinged and, for token auth, asked for a token once, with the scopes
// declared up front (see Scope and Transport). A Client is safe for
// concurrent use.
type Client struct {
	insecure      bool
	keychain      authn.Keychain
	base          http.RoundTripper
	jobs          int
	retryBase     time.Duration
	retryAfterMax time.Duration
	log           *slog.Logger

	session *transport.Session

	mu   sync.Mutex
	refs map[string]*referrersSupport // by registry: whether it serves the referrers API
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
	c := &Client{}
	for _, o := range opts {
		o(c)
	}
	c.session = transport.New(transport.Options{Keychain: c.keychain, Insecure: c.insecure, Base: c.base,
		RetryBase: c.retryBase, RetryAfterMax: c.retryAfterMax})
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
func (c *Client) Requests() int64 { return c.session.Requests() }

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
func IsLoopback(registry string) bool { return transport.IsLoopback(registry) }

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

// RoundTripper returns the client's unauthenticated transport
// (transport.Session.RoundTripper): it refuses plain HTTP to registries off
// loopback without --insecure, retries transient failures with a bounded
// backoff, honours Retry-After within a cap, reads manifests and small
// blobs whole (so that a connection cut mid-body is retried), refuses
// manifests over MaxManifestSize and checks content fetched by digest.
// Every request shows in Requests.
func (c *Client) RoundTripper() http.RoundTripper { return c.session.RoundTripper() }

// Scope declares, before the first request to their registries, the
// repositories this run reads (pull) and writes (push), so that each
// registry's handshake asks for every scope at once (see
// transport.Session.Scope).
func (c *Client) Scope(pull, push []name.Repository) { c.session.Scope(pull, push) }

// Transport returns repo's registry's authenticated transport, doing the
// handshake on first use, once per registry and run (see
// transport.Session.Transport).
func (c *Client) Transport(ctx context.Context, repo name.Repository) (http.RoundTripper, error) {
	return c.session.Transport(ctx, repo)
}
