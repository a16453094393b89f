package transport

import (
	"context"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// TestSessionOneHandshake: calls on three repositories of a bearer-token
// registry, named up front or not, share one ping and one token fetch; a
// plain go-containerregistry call does both each time. (regtest's token
// is good for every scope, so the refresh on a 401 for a scope not asked
// for is go-containerregistry's, untested here.)
func TestSessionOneHandshake(t *testing.T) {
	ctx := context.Background()
	auth := &regtest.BearerAuth{Token: "tok", Service: "regtest"}
	reg := regtest.New(t, regtest.WithMiddleware(auth.Middleware))
	img, err := regtest.LinuxImage("amd64")
	if err != nil {
		t.Fatal(err)
	}
	var refs []name.Reference
	for _, r := range []string{"base/a:1", "base/b:1", "app:1"} {
		ref := reg.MustRef(t, r)
		if _, err := regtest.Push(ref, img); err != nil {
			t.Fatal(err)
		}
		refs = append(refs, ref)
	}
	reg.ResetStats()
	tokens := auth.TokenRequests()
	c := New(Options{})
	c.Scope([]name.Repository{refs[0].Context()}, []name.Repository{refs[2].Context()})
	for _, ref := range refs {
		rt, err := c.Transport(ctx, ref.Context())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := remote.Get(ref, remote.WithContext(ctx), remote.WithTransport(rt)); err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
	}
	st := reg.Stats()
	// Other counts the pings and the token requests.
	if st.Other != 2 || st.Manifests != 3 || auth.TokenRequests()-tokens != 1 {
		t.Errorf("session: %d pings and token requests, %d manifest requests, %d token requests; want 2, 3, 1",
			st.Other, st.Manifests, auth.TokenRequests()-tokens)
	}

	reg.ResetStats()
	tokens = auth.TokenRequests()
	for _, ref := range refs {
		if _, err := remote.Get(ref, remote.WithContext(ctx)); err != nil {
			t.Fatal(err)
		}
	}
	if st, n := reg.Stats(), auth.TokenRequests()-tokens; st.Other != 6 || n != 3 {
		t.Errorf("without a session: %d pings and token requests, %d token requests; want 6, 3", st.Other, n)
	}
}
