package sign

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/cosign/v2/pkg/cosign"
	ociremote "github.com/sigstore/cosign/v2/pkg/oci/remote"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/registry"
)

func TestReferrersUnsupported(t *testing.T) {
	t.Parallel()
	a, _ := testKeys(t)
	reg := regtest.New(t)
	ref := pushIndex(t, reg, "app:1")
	_, err := Sign(context.Background(), ref, signer(t, a), Options{Referrers: true})
	if !errors.Is(err, registry.ErrReferrersUnsupported) {
		t.Fatalf("Sign with referrers on a registry without the API: %v, want ErrReferrersUnsupported", err)
	}
	if _, err := remote.Head(registry.SignatureTag(ref.Context(), hashOf(t, ref.DigestStr()), "sig")); err == nil {
		t.Fatal("a refused Sign wrote a signature")
	}
}

// TestReferrers stores signatures as referrers too, and reads them back the
// way cosign's OCI 1.1 mode does.
func TestReferrers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, _ := testKeys(t)
	reg := regtest.New(t, regtest.WithReferrers())
	ref := signedIndex(t, reg, "app:1", a, Options{Referrers: true})
	if fs := verifyRef(t, ref, pubKey(t, a)); len(fs) != 0 {
		t.Fatalf("tag signatures: %v", fs)
	}
	for _, d := range append([]string{ref.DigestStr()}, children(t, ref)[0].Digest.String()) {
		subject := ref.Context().Digest(d)
		im, err := ociremote.Referrers(subject, SignatureArtifactType)
		if err != nil {
			t.Fatal(err)
		}
		if len(im.Manifests) != 1 {
			t.Fatalf("%s: %d referrers of type %s, want 1", d, len(im.Manifests), SignatureArtifactType)
		}
		sigs, err := ociremote.Signatures(ref.Context().Digest(im.Manifests[0].Digest.String()))
		if err != nil {
			t.Fatal(err)
		}
		list, err := sigs.Get()
		if err != nil || len(list) != 1 {
			t.Fatalf("referrer signatures: %d, %v", len(list), err)
		}
		co := &cosign.CheckOpts{SigVerifier: pubKey(t, a).Verifier, ClaimVerifier: cosign.SimpleClaimVerifier, IgnoreTlog: true, IgnoreSCT: true}
		if _, err := cosign.VerifyImageSignature(ctx, list[0], hashOf(t, d), co); err != nil {
			t.Fatalf("cosign rejects the referrer signature of %s: %v", d, err)
		}
	}
}
