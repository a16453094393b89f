package transport

import (
	"crypto/tls"
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

// Options configure a Session; the zero value is production's defaults.
type Options struct {
	// Keychain resolves credentials; nil means authn.DefaultKeychain.
	Keychain authn.Keychain
	// Insecure allows plain HTTP and unverified TLS for registries that
	// are not on loopback (--insecure).
	Insecure bool
	// Base is the transport under the guard and the retries; nil means a
	// clone of remote.DefaultTransport. Tests count requests and inject
	// faults with it.
	Base http.RoundTripper
	// RetryBase is the first delay between retries; 0 means
	// EnvRetryBase or DefaultRetryBase.
	RetryBase time.Duration
	// RetryAfterMax caps the wait a Retry-After asks for; 0 means
	// EnvRetryAfterMax or DefaultRetryAfterMax.
	RetryAfterMax time.Duration
}

// Session is what every request of one command run goes through: one
// guarded, retrying transport (see RoundTripper) and, per registry, one
// handshake with the scopes declared up front (see Scope and Transport).
// A Session is safe for concurrent use.
type Session struct {
	insecure      bool
	keychain      authn.Keychain
	base          http.RoundTripper
	retryBase     time.Duration
	retryAfterMax time.Duration

	requests atomic.Int64
	once     sync.Once
	rt       http.RoundTripper // guardTransport over base
	retrying http.RoundTripper // rt with the retry policy

	mu     sync.Mutex
	scopes map[string][]string        // by registry, as declared with Scope
	auth   map[string]name.Repository // by registry: whose credentials to use
	rts    map[string]*sessionRT      // by registry: the authenticated transport
}

// New returns the Session of one command run.
func New(o Options) *Session {
	s := &Session{insecure: o.Insecure, keychain: o.Keychain, base: o.Base, retryBase: o.RetryBase,
		retryAfterMax: o.RetryAfterMax,
		scopes:        map[string][]string{}, auth: map[string]name.Repository{}, rts: map[string]*sessionRT{}}
	if s.keychain == nil {
		s.keychain = authn.DefaultKeychain
	}
	return s
}

// Requests returns how many HTTP requests this session has sent.
func (s *Session) Requests() int64 { return s.requests.Load() }

// RoundTripper returns the session's unauthenticated transport: it refuses
// plain HTTP to registries off loopback without --insecure, retries
// transient failures with a bounded backoff, honours Retry-After within a
// cap, reads manifests and small blobs whole (so that a connection cut
// mid-body is retried), refuses manifests over MaxManifestSize and checks
// content fetched by digest. Every request shows in Requests.
func (s *Session) RoundTripper() http.RoundTripper {
	s.once.Do(s.init)
	return s.retrying
}

func (s *Session) init() {
	s.rt = s.newTransport()
	s.retrying = newRetry(s.rt, s.backoff())
	if g, ok := s.rt.(*guardTransport); ok {
		s.retrying = forgetting{next: s.retrying, guard: g}
	}
}

func (s *Session) newTransport() http.RoundTripper {
	base := s.base
	if base == nil {
		t := remote.DefaultTransport.(*http.Transport).Clone()
		if s.insecure {
			t.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // asked for with --insecure
		}
		base = t
	}
	return &guardTransport{next: base, n: &s.requests, insecure: s.insecure, retryAfterMax: s.retryAfterMaxValue()}
}

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
