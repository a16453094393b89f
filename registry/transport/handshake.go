package transport

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	gtransport "github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// sessionRT is one registry's authenticated transport, made once.
type sessionRT struct {
	once sync.Once
	rt   http.RoundTripper
	err  error
}

// Scope declares, before the first request to their registries, the
// repositories this run reads (pull) and writes (push), so that each
// registry's handshake asks for every scope at once: one GET /v2/ and, for
// token auth, one token request per registry and command, and mounts and
// promote need no second round. A registry's credentials are the
// keychain's for its first push repository, else its first pull one. A
// call outside the declared scopes still works: go-containerregistry's
// bearer transport refreshes its token with the scope of a 401 challenge
// (one more token request).
func (s *Session) Scope(pull, push []name.Repository) {
	s.mu.Lock()
	defer s.mu.Unlock()
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
		add(r, gtransport.PushScope)
	}
	for _, r := range pull {
		add(r, gtransport.PullScope)
	}
}

// Transport returns repo's registry's authenticated transport, doing the
// handshake on first use. go-containerregistry runs a handshake for every
// transport it is given except a *transport.Wrapper, which is what
// NewWithContext returns: handing that out is what makes it one per
// registry. It retries and honours Retry-After as RoundTripper does.
func (s *Session) Transport(ctx context.Context, repo name.Repository) (http.RoundTripper, error) {
	k := repo.RegistryStr()
	s.mu.Lock()
	e, ok := s.rts[k]
	if !ok {
		e = &sessionRT{}
		s.rts[k] = e
	}
	who, ok := s.auth[k]
	if !ok {
		who = repo
	}
	scopes := slices.Clone(s.scopes[k])
	s.mu.Unlock()
	e.once.Do(func() {
		auth, err := authn.Resolve(ctx, s.keychain, who)
		if err != nil {
			e.err = fmt.Errorf("resolving credentials for %s: %w", repo, err)
			return
		}
		if len(scopes) == 0 {
			scopes = []string{repo.Scope(gtransport.PullScope)}
		}
		base := gtransport.NewUserAgent(s.RoundTripper(), "imgctl")
		if e.rt, err = gtransport.NewWithContext(ctx, repo.Registry, auth, base, scopes); err != nil {
			e.err = fmt.Errorf("authenticating to %s: %w", repo.RegistryStr(), err)
		}
	})
	return e.rt, e.err
}
