package sign

import (
	"context"
	"crypto"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/sigstore/cosign/v3/cmd/cosign/cli/options"
	cosignsign "github.com/sigstore/cosign/v3/cmd/cosign/cli/sign"
	"github.com/sigstore/cosign/v3/cmd/cosign/cli/signcommon"
	cosignverify "github.com/sigstore/cosign/v3/cmd/cosign/cli/verify"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/internal/testing/signtest"
)

// cosignV3Verify runs cosign v3's `cosign verify --key pub
// --insecure-ignore-tlog --new-bundle-format --check-claims
// --allow-http-registry ref` in-process: offline, with the key as the only
// trusted material.
func cosignV3Verify(ctx context.Context, pub, ref string) error {
	c := &cosignverify.VerifyCommand{
		RegistryOptions: options.RegistryOptions{AllowHTTPRegistry: true},
		KeyRef:          pub,
		IgnoreTlog:      true,
		CheckClaims:     true,
		NewBundleFormat: true,
		HashAlgorithm:   crypto.SHA256,
	}
	return c.Exec(ctx, []string{ref})
}

// TestCosignV3VerifiesOurBundles: what Sign writes with FormatBundle
// verifies with cosign v3's own verify command, with a key, no Rekor and
// no TUF, through the referrers API and through the fallback tag; with
// another key it does not. There is no .sig tag, so a pass is the bundle's.
func TestCosignV3VerifiesOurBundles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, _ := testKeys(t)
	pub := filepath.Join(t.TempDir(), "cosign.pub")
	if err := os.WriteFile(pub, a.pair.Public, 0o644); err != nil {
		t.Fatal(err)
	}
	other := signtest.NewKey(t)
	eachRegistry(t, func(t *testing.T, _ *regtest.Registry, ref name.Digest, _ bool) {
		if _, err := Sign(ctx, ref, signer(t, a), Options{Format: FormatBundle, Recursive: true}); err != nil {
			t.Fatal(err)
		}
		for _, s := range Subjects(loadSnapshot(t, ref)) {
			d := ref.Context().Digest(s.Digest.String())
			if n := sigLayers(t, ref.Context(), s.Digest); n != 0 {
				t.Fatalf("%s has %d legacy signatures, want none", d, n)
			}
			if err := cosignV3Verify(ctx, pub, d.String()); err != nil {
				t.Errorf("cosign v3 verify %s: %v", d, err)
			}
			if err := cosignV3Verify(ctx, other.PublicPath, d.String()); err == nil {
				t.Errorf("cosign v3 verify %s with another key passed", d)
			}
		}
	})
}

// TestWeAcceptCosignV3Bundles: cosign v3's own sign command (driven
// in-process as `cosign sign --key cosign.key --tlog-upload=false
// --use-signing-config=false --new-bundle-format --recursive
// --allow-http-registry`) writes bundles that Verify accepts, with the
// referrers API and without it; another key's check fails.
func TestWeAcceptCosignV3Bundles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := testKeys(t)
	key := filepath.Join(t.TempDir(), "cosign.key")
	if err := os.WriteFile(key, a.pair.Private, 0o600); err != nil {
		t.Fatal(err)
	}
	eachRegistry(t, func(t *testing.T, _ *regtest.Registry, ref name.Digest, _ bool) {
		ko := options.KeyOpts{KeyRef: key, PassFunc: func(bool) ([]byte, error) { return []byte("pw"), nil },
			NewBundleFormat: true, SkipConfirmation: true}
		so := options.SignOptions{Upload: true, TlogUpload: false, NewBundleFormat: true, UseSigningConfig: false,
			Recursive: true, SkipConfirmation: true, Registry: options.RegistryOptions{AllowHTTPRegistry: true}}
		if err := signcommon.LoadTrustedMaterialAndSigningConfig(ctx, &ko, so.UseSigningConfig, so.SigningConfigPath,
			"", "", "", "", "", so.TlogUpload, so.NewBundleFormat, "", ko.KeyRef, false, "", "", "", "", "", ""); err != nil {
			t.Fatal(err)
		}
		if err := cosignsign.SignCmd(ctx, &options.RootOptions{Timeout: time.Minute}, ko, so, []string{ref.String()}); err != nil {
			t.Fatalf("cosign v3 sign: %v", err)
		}
		snap := loadSnapshot(t, ref)
		for _, s := range Subjects(snap) {
			if n, m := sigLayers(t, ref.Context(), s.Digest), len(bundleReferrers(t, ref.Context().Digest(s.Digest.String()))); n != 0 || m != 1 {
				t.Fatalf("%s: %d legacy signatures and %d bundles, want only one bundle", s.Digest, n, m)
			}
		}
		fs, err := Verify(ctx, ref.Context(), Subjects(snap), []Key{pubKey(t, a)}, VerifyOptions{})
		if err != nil || len(fs) != 0 {
			t.Fatalf("cosign v3 bundles rejected: %v, %v", fs, err)
		}
		fs, err = Verify(ctx, ref.Context(), Subjects(snap), []Key{pubKey(t, b)}, VerifyOptions{})
		if err != nil || len(fs) != len(Subjects(snap)) || fs[0].Rule != RuleBadSignature {
			t.Fatalf("another key: %v, %v; want bad-signature for every subject", fs, err)
		}
	})
}
