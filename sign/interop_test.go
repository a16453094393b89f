package sign

import (
	"bytes"
	"context"
	"crypto"
	"encoding/base64"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/sigstore/cosign/v2/pkg/cosign"
	"github.com/sigstore/cosign/v2/pkg/oci"
	"github.com/sigstore/cosign/v2/pkg/oci/mutate"
	ociremote "github.com/sigstore/cosign/v2/pkg/oci/remote"
	"github.com/sigstore/cosign/v2/pkg/oci/static"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/payload"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/internal/testing/signtest"
)

// TestCosignAcceptsOurSignatures checks every signature Sign wrote in the
// legacy format with cosign v2's own verification code, with and without
// the referrers API.
func TestCosignAcceptsOurSignatures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, _ := testKeys(t)
	eachRegistry(t, func(t *testing.T, _ *regtest.Registry, ref name.Digest, _ bool) {
		if _, err := Sign(ctx, ref, signer(t, a), Options{Format: FormatLegacy, Attestations: true}); err != nil {
			t.Fatal(err)
		}
		v, err := cryptoutils.UnmarshalPEMToPublicKey(a.pair.Public)
		if err != nil {
			t.Fatal(err)
		}
		sv, err := signature.LoadVerifier(v, crypto.SHA256)
		if err != nil {
			t.Fatal(err)
		}
		co := &cosign.CheckOpts{SigVerifier: sv, ClaimVerifier: cosign.SimpleClaimVerifier, IgnoreTlog: true, IgnoreSCT: true}
		digests := []string{ref.DigestStr()}
		for _, m := range children(t, ref) {
			digests = append(digests, m.Digest.String())
		}
		for _, d := range digests {
			if sigs, _, err := cosign.VerifyImageSignatures(ctx, ref.Context().Digest(d), co); err != nil || len(sigs) != 1 {
				t.Fatalf("cosign verify %s: %d signatures, %v", d, len(sigs), err)
			}
		}
	})
}

// TestWeAcceptCosignSignatures signs with cosign v2's lower-level APIs and
// a key pair cosign generated (not with this package), then verifies, with
// and without the referrers API.
func TestWeAcceptCosignSignatures(t *testing.T) {
	t.Parallel()
	eachRegistry(t, func(t *testing.T, _ *regtest.Registry, ref name.Digest, _ bool) {
		key := signtest.NewKey(t) // made with cosign's and sigstore's code, not this package's
		sv, pub := key.Signer, key.Public
		se, err := ociremote.SignedEntity(ref)
		if err != nil {
			t.Fatal(err)
		}
		sii := se.(oci.SignedImageIndex)
		signed, err := mutate.AttachSignatureToImageIndex(sii, cosignSig(t, ref, sv))
		if err != nil {
			t.Fatal(err)
		}
		if err := ociremote.WriteSignatures(ref.Context(), signed); err != nil {
			t.Fatal(err)
		}
		for _, m := range children(t, ref) {
			img, err := sii.SignedImage(m.Digest)
			if err != nil {
				t.Fatal(err)
			}
			si, err := mutate.AttachSignatureToImage(img, cosignSig(t, ref.Context().Digest(m.Digest.String()), sv))
			if err != nil {
				t.Fatal(err)
			}
			if err := ociremote.WriteSignatures(ref.Context(), si); err != nil {
				t.Fatal(err)
			}
		}
		k, err := LoadPublicKey("cosign.pub", pub)
		if err != nil {
			t.Fatal(err)
		}
		if fs := verifyRef(t, ref, k); len(fs) != 0 {
			t.Fatalf("cosign-made signatures rejected: %v", fs)
		}
	})
}

// cosignSig signs the simple-signing payload for d as cosign sign does.
func cosignSig(t *testing.T, d name.Digest, sv signature.Signer) oci.Signature {
	t.Helper()
	pl, err := (&payload.Cosign{Image: d}).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sv.SignMessage(bytes.NewReader(pl))
	if err != nil {
		t.Fatal(err)
	}
	sig, err := static.NewSignature(pl, base64.StdEncoding.EncodeToString(raw))
	if err != nil {
		t.Fatal(err)
	}
	return sig
}
