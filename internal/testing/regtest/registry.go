package regtest

import (
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
)

// Registry is an in-process OCI registry listening on 127.0.0.1 with an
// ephemeral port. Requests pass through, in order: request accounting (Stats),
// the middleware (WithMiddleware, SetMiddleware), per-repository blob scoping
// with cross-repository mounts, and go-containerregistry's pkg/registry.
type Registry struct {
	srv   *http.Server
	ln    net.Listener
	inner http.Handler
	stats recorder

	mu sync.RWMutex
	mw func(http.Handler) http.Handler

	closeOnce sync.Once
}

// Option configures a Registry.
type Option func(*config)

type config struct {
	mws       []func(http.Handler) http.Handler
	regOpts   []registry.Option
	referrers bool
}

// WithMiddleware wraps the registry handler, for example to inject 500, 429
// or connection resets. Several middlewares apply in order, the first outermost.
func WithMiddleware(mw func(http.Handler) http.Handler) Option {
	return func(c *config) { c.mws = append(c.mws, mw) }
}

// WithRegistryOptions passes options to go-containerregistry's registry.New,
// for example registry.WithReferrersSupport(true). A quiet logger is always set.
func WithRegistryOptions(opts ...registry.Option) Option {
	return func(c *config) { c.regOpts = append(c.regOpts, opts...) }
}

// WithReferrers serves the OCI 1.1 referrers API (without it the registry
// answers 404 there, as the CNCF distribution registry does, and writers
// fall back to the sha256-<digest> referrers tag). It is
// go-containerregistry's, with each referrer's artifactType and the
// artifactType filter as the spec says (see referrersAPI).
func WithReferrers() Option {
	return func(c *config) {
		c.regOpts = append(c.regOpts, registry.WithReferrersSupport(true))
		c.referrers = true
	}
}

// Start starts a registry on 127.0.0.1 with an ephemeral port. Call Close
// when done.
func Start(opts ...Option) (*Registry, error) {
	var c config
	for _, o := range opts {
		o(&c)
	}
	regOpts := append([]registry.Option{registry.Logger(log.New(io.Discard, "", 0))}, c.regOpts...)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening on 127.0.0.1: %w", err)
	}
	inner := newScope().middleware(registry.New(regOpts...))
	if c.referrers {
		inner = referrersAPI(inner)
	}
	r := &Registry{
		ln:    ln,
		inner: inner,
		mw:    chain(c.mws),
	}
	r.srv = &http.Server{
		Handler:           r.stats.middleware(http.HandlerFunc(r.serve)),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

// New starts a registry and closes it when the test ends.
func New(t testing.TB, opts ...Option) *Registry {
	t.Helper()
	r, err := Start(opts...)
	if err != nil {
		t.Fatalf("starting registry: %v", err)
	}
	t.Cleanup(r.Close)
	return r
}

func (r *Registry) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.RLock()
	mw := r.mw
	r.mu.RUnlock()
	if mw == nil {
		r.inner.ServeHTTP(w, req)
		return
	}
	mw(r.inner).ServeHTTP(w, req)
}

// chain composes middlewares, the first outermost; nil for none.
func chain(mws []func(http.Handler) http.Handler) func(http.Handler) http.Handler {
	if len(mws) == 0 {
		return nil
	}
	return func(h http.Handler) http.Handler {
		for i := len(mws) - 1; i >= 0; i-- {
			h = mws[i](h)
		}
		return h
	}
}

// SetMiddleware replaces the middleware at runtime, for tests that need to
// fail half-way. It takes effect for requests that arrive afterwards; nil
// removes it.
func (r *Registry) SetMiddleware(mw func(http.Handler) http.Handler) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mw = mw
}

// Close stops the registry and closes open connections. It is safe to call
// more than once.
func (r *Registry) Close() {
	r.closeOnce.Do(func() { _ = r.srv.Close() })
}

// Host returns the registry address, "127.0.0.1:PORT".
func (r *Registry) Host() string { return r.ln.Addr().String() }

// URL returns the base URL of the registry, "http://127.0.0.1:PORT".
func (r *Registry) URL() string { return "http://" + r.Host() }

// Stats returns a snapshot of the request accounting.
func (r *Registry) Stats() Stats { return r.stats.snapshot() }

// ResetStats zeroes the request accounting.
func (r *Registry) ResetStats() { r.stats.reset() }

// Ref parses s ("repo:tag" or "repo@sha256:...") as a reference on this
// registry.
func (r *Registry) Ref(s string) (name.Reference, error) {
	ref, err := name.ParseReference(r.Host()+"/"+s, name.Insecure)
	if err != nil {
		return nil, fmt.Errorf("parsing reference %q: %w", s, err)
	}
	return ref, nil
}

// MustRef is Ref that fails the test on error.
func (r *Registry) MustRef(t testing.TB, s string) name.Reference {
	t.Helper()
	ref, err := r.Ref(s)
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// Repo parses s as a repository on this registry.
func (r *Registry) Repo(s string) (name.Repository, error) {
	repo, err := name.NewRepository(r.Host()+"/"+s, name.Insecure)
	if err != nil {
		return name.Repository{}, fmt.Errorf("parsing repository %q: %w", s, err)
	}
	return repo, nil
}
