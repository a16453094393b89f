package promote

import (
	"context"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	ociremote "github.com/sigstore/cosign/v2/pkg/oci/remote"

	"github.com/imgctl/imgctl/internal/testing/gatetest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/internal/testing/signtest"
	"github.com/imgctl/imgctl/sign"
)

// TestPromoteCompletesExistingTag: when the destination tag already points
// at the digest without its signatures (a plain `crane copy` of the index),
// promote copies the signature tags and referrers there, verifies them
// there, and leaves the tag alone; the destination then verifies with the
// key. A second run copies nothing.
func TestPromoteCompletesExistingTag(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	k := signtest.NewKey(t)
	src, prod := regtest.New(t, regtest.WithReferrers()), regtest.New(t)
	srcRef := gatetest.PushSigned(t, src, "ci/app:1", regtest.Must(regtest.MultiOSIndex())(t), k.Signer, true)
	dst := tag(t, prod, "release/app:1.0")
	regtest.MustPush(t, dst, regtest.Must(remote.Index(srcRef))(t)) // crane copy: the index, no signatures
	g := gate(t, nil, k.PublicPath)

	pr, err := Run(ctx, g, srcRef.Context().Tag("1"), dst, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if pr.Pushed || pr.Signatures.Tags != 9 || pr.Signatures.Referrers != 9 {
		t.Fatalf("promotion onto the copied tag: pushed %t, copied %+v; want the tag left alone and 9 signature tags and 9 referrers copied",
			pr.Pushed, pr.Signatures)
	}
	rep, err := gate(t, nil, k.PublicPath).Check(ctx, dst.String(), dst.Context(), gatetest.LoadSnap(t, dst))
	if err != nil || !rep.Passed {
		t.Fatalf("verify --key at the destination: %v %+v", err, rep)
	}
	if refs, err := ociremote.Referrers(dst.Context().Digest(srcRef.DigestStr()), sign.SignatureArtifactType); err != nil || len(refs.Manifests) != 1 {
		t.Errorf("referrers at the destination: %v, %v", refs, err)
	}
	if pr, err := Run(ctx, g, srcRef, dst, Options{}); err != nil || pr.Pushed || pr.Signatures.Tags+pr.Signatures.Referrers != 0 {
		t.Fatalf("second promotion: %v, %+v", err, pr)
	}
}
