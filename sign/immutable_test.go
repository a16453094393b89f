package sign

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/registry"
)

// ecrRefusal answers a manifest PUT to tags ending in suffix (of repo, ""
// for any) as Amazon ECR does for a tag of an IMMUTABLE repository.
func ecrRefusal(suffix, repo string) regtest.Fault {
	return regtest.Fault{Kind: regtest.FaultAnswer, Route: regtest.RouteManifestByTag, Method: http.MethodPut,
		Suffix: suffix, Repo: repo, Status: http.StatusBadRequest,
		Body: `{"errors":[{"code":"TAG_INVALID","message":"The image tag already exists in the 'app' repository and cannot be overwritten because the repository is immutable."}]}`}
}

// wantImmutable checks that err is the registry's immutability refusal of
// a tag ending in suffix, said as such: ErrTagExists, naming the tag and
// the immutability, never a finding.
func wantImmutable(t *testing.T, err error, suffix string) {
	t.Helper()
	var ite *registry.ImmutableTagError
	if !errors.Is(err, registry.ErrTagExists) || !errors.As(err, &ite) || !strings.HasSuffix(ite.Tag, suffix) ||
		!strings.Contains(err.Error(), "immutable") || !strings.Contains(err.Error(), ite.Tag) {
		t.Fatalf("error %v; want the registry's immutability refusal of the tag ...%s", err, suffix)
	}
}

// TestSignImmutableTags: a registry that holds the .sig tag or the
// referrers fallback tag immutable (ECR, Harbor, ACR) refuses the second
// signature; Sign and promote's merge say so, naming the tag, instead of
// leaving a subject to be reported unsigned.
func TestSignImmutableTags(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := testKeys(t)
	fast := func() *registry.Client { return registry.New(registry.WithRetryBase(time.Millisecond)) }

	t.Run("legacy .sig tag", func(t *testing.T) {
		t.Parallel()
		reg := regtest.New(t)
		ref := pushIndex(t, reg, "app:1")
		if _, err := Sign(ctx, ref, signer(t, a), Options{Format: FormatLegacy}); err != nil {
			t.Fatal(err)
		}
		reg.SetMiddleware(regtest.NewFaults(ecrRefusal(".sig", "")).Middleware)
		_, err := Sign(ctx, ref, signer(t, b), Options{Format: FormatLegacy, Registry: fast()})
		reg.SetMiddleware(nil)
		wantImmutable(t, err, strings.Replace(ref.DigestStr(), ":", "-", 1)+".sig")
	})

	t.Run("bundle fallback tag", func(t *testing.T) {
		t.Parallel()
		reg := regtest.New(t) // no referrers API: the fallback tag lists the bundles
		ref := pushIndex(t, reg, "app:1")
		if _, err := Sign(ctx, ref, signer(t, a), Options{Format: FormatBundle}); err != nil {
			t.Fatal(err)
		}
		tag := strings.Replace(ref.DigestStr(), ":", "-", 1)
		reg.SetMiddleware(regtest.NewFaults(ecrRefusal(tag, "")).Middleware)
		_, err := Sign(ctx, ref, signer(t, b), Options{Format: FormatBundle, Registry: fast()})
		reg.SetMiddleware(nil)
		wantImmutable(t, err, tag)
	})

	t.Run("promote merging a .sig tag", func(t *testing.T) {
		t.Parallel()
		reg := regtest.New(t)
		ref := pushIndex(t, reg, "app:1")
		if _, err := Sign(ctx, ref, signer(t, a), Options{Format: FormatLegacy}); err != nil {
			t.Fatal(err)
		}
		dst := regtest.Must(reg.Repo("release"))(t)
		idx, err := remote.Index(ref)
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.WriteIndex(dst.Digest(ref.DigestStr()), idx); err != nil {
			t.Fatal(err)
		}
		if _, err := Sign(ctx, dst.Digest(ref.DigestStr()), signer(t, b), Options{Format: FormatLegacy}); err != nil {
			t.Fatal(err)
		}
		reg.SetMiddleware(regtest.NewFaults(ecrRefusal(".sig", "release")).Middleware)
		rc := fast()
		_, err = rc.CopyArtifacts(ctx, ref.Context(), dst, []v1.Hash{hashOf(t, ref.DigestStr())}, registry.ArtifactOptions{Merge: Merge(rc)})
		reg.SetMiddleware(nil)
		wantImmutable(t, err, strings.Replace(ref.DigestStr(), ":", "-", 1)+".sig")
	})
}
