package sign

import (
	"context"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	ociremote "github.com/sigstore/cosign/v2/pkg/oci/remote"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/registry"
)

func allDigests(t *testing.T, ref name.Digest) []v1.Hash {
	t.Helper()
	out := []v1.Hash{hashOf(t, ref.DigestStr())}
	for _, m := range children(t, ref) {
		out = append(out, m.Digest)
	}
	return out
}

func TestCopyArtifacts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := testKeys(t)
	src := regtest.New(t, regtest.WithReferrers())
	other := regtest.New(t)
	ref := pushIndex(t, src, "app:1")
	if _, err := Sign(ctx, ref, signer(t, a), Options{Attestations: true, Referrers: true}); err != nil {
		t.Fatal(err)
	}
	snap := loadSnapshot(t, ref)
	for _, tc := range []struct {
		name      string
		reg       *regtest.Registry
		repo      string
		preSigned bool // dst already has key b's signature of the index
	}{
		{"same registry", src, "release", false},
		{"same registry, merging", src, "merged", true},
		{"other registry", other, "release", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst, err := tc.reg.Repo(tc.repo)
			if err != nil {
				t.Fatal(err)
			}
			idx, _ := remote.Index(ref)
			if err := remote.WriteIndex(dst.Digest(ref.DigestStr()), idx); err != nil {
				t.Fatal(err)
			}
			if tc.preSigned {
				if _, err := Sign(ctx, dst.Digest(ref.DigestStr()), signer(t, b), Options{}); err != nil {
					t.Fatal(err)
				}
			}
			tc.reg.ResetStats()
			rc := registry.New()
			res, err := rc.CopyArtifacts(ctx, ref.Context(), dst, allDigests(t, ref), registry.ArtifactOptions{Merge: Merge(rc)})
			if err != nil {
				t.Fatal(err)
			}
			if res.Tags != 9 || res.Referrers != 9 {
				t.Errorf("copied %d tags and %d referrers, want 9 and 9", res.Tags, res.Referrers)
			}
			if st := tc.reg.Stats(); tc.reg == src && !tc.preSigned && st.BlobBytesReceived != 0 {
				t.Errorf("same-registry copy uploaded %d bytes instead of mounting: %s", st.BlobBytesReceived, st)
			}
			if fs, err := Verify(ctx, dst, Subjects(snap), []Key{pubKey(t, a)}, VerifyOptions{}); err != nil || len(fs) != 0 {
				t.Fatalf("copied signatures: %v, %v", fs, err)
			}
			if tc.preSigned {
				if fs, err := Verify(ctx, dst, Subjects(snap)[:1], []Key{pubKey(t, b)}, VerifyOptions{}); err != nil || len(fs) != 0 {
					t.Fatalf("the signature dst had was lost: %v, %v", fs, err)
				}
			}
			im, err := ociremote.Referrers(dst.Digest(ref.DigestStr()), SignatureArtifactType)
			if err != nil || len(im.Manifests) != 1 {
				t.Fatalf("referrers at dst: %v, %v", im, err)
			}
			// A second copy writes nothing.
			rc = registry.New()
			if res, err := rc.CopyArtifacts(ctx, ref.Context(), dst, allDigests(t, ref), registry.ArtifactOptions{Merge: Merge(rc)}); err != nil || res.Tags+res.Referrers != 0 {
				t.Fatalf("second copy: %+v, %v", res, err)
			}
		})
	}
}
