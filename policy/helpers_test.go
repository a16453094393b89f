package policy

import (
	"context"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/sign"
	"github.com/imgctl/imgctl/snapshot"
	"github.com/imgctl/imgctl/verify"

	"github.com/imgctl/imgctl/internal/testing/signtest"
)

// testKey is an in-memory ECDSA key with its public key written to a file.
type testKey struct {
	sv   signature.SignerVerifier
	path string
}

func newKey(t *testing.T) testKey {
	t.Helper()
	k := signtest.NewKey(t)
	return testKey{k.Signer, k.PublicPath}
}

// pushSigned pushes x to reg at repoTag and, unless k is nil, signs it
// recursively, attestation manifests included; it returns the digest
// reference.
func pushSigned(t *testing.T, reg *regtest.Registry, repoTag string, x any, k *testKey, referrers bool) name.Digest {
	t.Helper()
	ref, d, err := reg.PushTag(repoTag, x)
	if err != nil {
		t.Fatal(err)
	}
	dr := ref.Context().Digest(d.String())
	if k != nil {
		if _, err := sign.Sign(context.Background(), dr, k.sv, sign.Options{Attestations: true, Referrers: referrers}); err != nil {
			t.Fatal(err)
		}
	}
	return dr
}

func gate(t *testing.T, p *Policy, keys ...string) *Gate {
	t.Helper()
	g, err := NewGate(p, verify.Options{}, keys, sign.ScopeReference)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// loadSnap reads the index ref points at as a snapshot.
func loadSnap(t *testing.T, ref name.Reference) *snapshot.Snapshot {
	t.Helper()
	_, s, err := registry.New().Snapshot(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
