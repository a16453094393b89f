package registry

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
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
func (c *Client) Scope(pull, push []name.Repository) {
	c.mu.Lock()
	defer c.mu.Unlock()
	add := func(r name.Repository, action string) {
		k := r.RegistryStr()
		if sc := r.Scope(action); !slices.Contains(c.scopes[k], sc) {
			c.scopes[k] = append(c.scopes[k], sc)
		}
		if _, ok := c.auth[k]; !ok {
			c.auth[k] = r
		}
	}
	for _, r := range push {
		add(r, transport.PushScope)
	}
	for _, r := range pull {
		add(r, transport.PullScope)
	}
}

// Transport returns repo's registry's authenticated transport, doing the
// handshake on first use. go-containerregistry runs a handshake for every
// transport it is given except a *transport.Wrapper, which is what
// NewWithContext returns: handing that out is what makes it one per
// registry. It retries and honours Retry-After as RoundTripper does.
func (c *Client) Transport(ctx context.Context, repo name.Repository) (http.RoundTripper, error) {
	k := repo.RegistryStr()
	c.mu.Lock()
	e, ok := c.rts[k]
	if !ok {
		e = &sessionRT{}
		c.rts[k] = e
	}
	who, ok := c.auth[k]
	if !ok {
		who = repo
	}
	scopes := slices.Clone(c.scopes[k])
	c.mu.Unlock()
	e.once.Do(func() {
		auth, err := authn.Resolve(ctx, c.keychain, who)
		if err != nil {
			e.err = fmt.Errorf("resolving credentials for %s: %w", repo, err)
			return
		}
		if len(scopes) == 0 {
			scopes = []string{repo.Scope(transport.PullScope)}
		}
		base := transport.NewUserAgent(c.RoundTripper(), "imgctl")
		if e.rt, err = transport.NewWithContext(ctx, repo.Registry, auth, base, scopes); err != nil {
			e.err = fmt.Errorf("authenticating to %s: %w", repo.RegistryStr(), err)
		}
	})
	return e.rt, e.err
}
