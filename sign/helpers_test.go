package sign

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/imgctl/imgctl/findings"
	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/snapshot"

	"github.com/imgctl/imgctl/internal/testing/signtest"
)

var (
	keyOnce sync.Once
	keyA    *KeyPair
	svA     signature.SignerVerifier
	keyErr  error
)

// testKey is the key pair tests sign with: made by GenerateKeyPair with
// password "pw" and decrypted by LoadPrivateKey, once per test binary
// because scrypt takes seconds under -race.
type testKey struct {
	pair *KeyPair
	sv   signature.SignerVerifier
}

// testKeys returns key a (from encrypted key files) and key b (in memory).
func testKeys(t *testing.T) (a, b *testKey) {
	t.Helper()
	keyOnce.Do(func() {
		if keyA, keyErr = GenerateKeyPair([]byte("pw")); keyErr == nil {
			svA, keyErr = LoadPrivateKey(keyA.Private, []byte("pw"))
		}
	})
	if keyErr != nil {
		t.Fatal(keyErr)
	}
	return &testKey{keyA, svA}, memKey(t)
}

// memKey makes an ECDSA P-256 key pair in memory, without cosign's
// encrypted key file (and its slow scrypt).
func memKey(t *testing.T) *testKey {
	t.Helper()
	k := signtest.NewKey(t)
	return &testKey{&KeyPair{Public: k.Public}, k.Signer}
}

func signer(t *testing.T, k *testKey) signature.SignerVerifier {
	t.Helper()
	return k.sv
}

func pubKey(t *testing.T, tk *testKey) Key {
	t.Helper()
	k, err := LoadPublicKey("test.pub", tk.pair.Public)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// pushIndex pushes the MultiOSIndex fixture to repo:tag and returns its
// digest reference.
func pushIndex(t *testing.T, reg *regtest.Registry, repoTag string) name.Digest {
	t.Helper()
	ref, d, err := reg.PushTag(repoTag, regtest.Must(regtest.MultiOSIndex())(t))
	if err != nil {
		t.Fatal(err)
	}
	return ref.Context().Digest(d.String())
}

// signedIndex pushes the test index to repoTag and signs it, and every
// child (images and attestation manifests), with k and the options o
// (Attestations is always set).
func signedIndex(t *testing.T, reg *regtest.Registry, repoTag string, k *testKey, o Options) name.Digest {
	t.Helper()
	ref := pushIndex(t, reg, repoTag)
	o.Attestations = true
	if _, err := Sign(context.Background(), ref, signer(t, k), o); err != nil {
		t.Fatal(err)
	}
	return ref
}
func loadSnapshot(t *testing.T, ref name.Digest) *snapshot.Snapshot {
	t.Helper()
	idx, err := remote.Index(ref)
	if err != nil {
		t.Fatal(err)
	}
	s, err := snapshot.LoadIndex(context.Background(), idx, 0)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func verifyRef(t *testing.T, ref name.Digest, keys ...Key) []findings.Finding {
	t.Helper()
	fs, err := Verify(context.Background(), ref.Context(), Subjects(loadSnapshot(t, ref)), keys, VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// rules returns digest -> rule for each finding.
func rules(fs []findings.Finding) map[string]string {
	out := map[string]string{}
	for _, f := range fs {
		out[f.Digest] = f.Rule
	}
	return out
}

func children(t *testing.T, ref name.Digest) []v1.Descriptor {
	t.Helper()
	idx, err := remote.Index(ref)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	return im.Manifests
}

func hashOf(t *testing.T, s string) v1.Hash {
	t.Helper()
	h, err := v1.NewHash(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// hashStrings returns the digests as strings, in order.
func hashStrings(hs []v1.Hash) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.String()
	}
	return out
}
