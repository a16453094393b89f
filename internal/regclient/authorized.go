package regclient

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// Session shares one authenticated transport per registry between the
// calls of one command run, so that a registry is pinged (GET /v2/) and,
// for a bearer-token registry, asked for a token once rather than once per
// call: go-containerregistry runs the handshake for every transport it is
// given, except a *transport.Wrapper, which is how NewWithContext returns
// a finished one. Scopes are asked for up front; a call outside them
// still works, since go-containerregistry's bearer transport refreshes
// its token with the scope of a 401 challenge.
type Session struct {
	o      *Options
	scopes map[string][]string        // by registry, as given to NewSession
	auth   map[string]name.Repository // by registry: whose credentials to use
	mu     sync.Mutex
	rts    map[string]*sessionRT
}

type sessionRT struct {
	once sync.Once
	rt   http.RoundTripper
	err  error
}

// NewSession returns a Session whose handshakes ask for pull scope on
// pull and push scope on push. A registry's credentials are the
// keychain's for its first push repository, else its first pull one,
// whichever call comes first.
func (o *Options) NewSession(pull, push []name.Repository) *Session {
	s := &Session{o: o, scopes: map[string][]string{}, auth: map[string]name.Repository{}, rts: map[string]*sessionRT{}}
	add := func(r name.Repository, action string) {
		k := r.RegistryStr()
		if sc := r.Scope(action); !slices.Contains(s.scopes[k], sc) {
			s.scopes[k] = append(s.scopes[k], sc)
		}
		if _, ok := s.auth[k]; !ok {
			s.auth[k] = r
		}
	}
	for _, r := range push {
		add(r, transport.PushScope)
	}
	for _, r := range pull {
		add(r, transport.PullScope)
	}
	return s
}

// Transport returns the registry's authenticated transport, doing the
// handshake on first use with the credentials the keychain has for repo.
func (s *Session) Transport(ctx context.Context, repo name.Repository) (http.RoundTripper, error) {
	k := repo.RegistryStr()
	s.mu.Lock()
	e, ok := s.rts[k]
	if !ok {
		e = &sessionRT{}
		s.rts[k] = e
	}
	s.mu.Unlock()
	e.once.Do(func() {
		kc := s.o.Keychain
		if kc == nil {
			kc = authn.DefaultKeychain
		}
		who, ok := s.auth[k]
		if !ok {
			who = repo
		}
		auth, err := authn.Resolve(ctx, kc, who)
		if err != nil {
			e.err = fmt.Errorf("resolving credentials for %s: %w", repo, err)
			return
		}
		scopes := s.scopes[k]
		if len(scopes) == 0 {
			scopes = []string{repo.Scope(transport.PullScope)}
		}
		base := transport.NewUserAgent(s.o.RoundTripper(), "imgctl")
		if e.rt, err = transport.NewWithContext(ctx, repo.Registry, auth, base, scopes); err != nil {
			e.err = fmt.Errorf("authenticating to %s: %w", repo.RegistryStr(), err)
		}
	})
	return e.rt, e.err
}

// Remote returns go-containerregistry options for calls on repo through
// the registry's shared transport; it retries as Options.RoundTripper does.
func (s *Session) Remote(ctx context.Context, repo name.Repository) ([]remote.Option, error) {
	rt, err := s.Transport(ctx, repo)
	if err != nil {
		return nil, err
	}
	opts := []remote.Option{remote.WithContext(ctx), remote.WithTransport(rt)}
	if s.o.Jobs > 0 {
		opts = append(opts, remote.WithJobs(s.o.Jobs))
	}
	return opts, nil
}
