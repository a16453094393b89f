package sign

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/registry"
)

// referrerRegistries are the two kinds of registry signatures are read
// from: one serving the OCI 1.1 referrers API, one without it (the
// referrers tag fallback, as on the CNCF distribution registry).
var referrerRegistries = []struct {
	name string
	opts []regtest.Option
	api  bool
}{{"referrers API", []regtest.Option{regtest.WithReferrers()}, true}, {"no referrers API", nil, false}}

// eachRegistry runs f, in parallel, on each of referrerRegistries with
// the test index pushed to app:1; api says whether the registry serves the
// referrers API.
func eachRegistry(t *testing.T, f func(t *testing.T, reg *regtest.Registry, ref name.Digest, api bool)) {
	t.Helper()
	for _, rt := range referrerRegistries {
		t.Run(rt.name, func(t *testing.T) {
			t.Parallel()
			reg := regtest.New(t, rt.opts...)
			f(t, reg, pushIndex(t, reg, "app:1"), rt.api)
		})
	}
}

// bundleReferrers lists the bundle referrers of d with go-containerregistry's
// own reader (the API, or the fallback tag), not imgctl's.
func bundleReferrers(t *testing.T, d name.Digest) []v1.Descriptor {
	t.Helper()
	idx := regtest.Must(remote.Referrers(d, remote.WithFilter("artifactType", BundleArtifactType)))(t)
	return regtest.Must(idx.IndexManifest())(t).Manifests
}

// sigLayers counts the signatures in d's .sig tag (0 without one).
func sigLayers(t *testing.T, repo name.Repository, d v1.Hash) int {
	t.Helper()
	img, err := remote.Image(registry.SignatureTag(repo, d, "sig"))
	if err != nil {
		return 0
	}
	ls, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	return len(ls)
}

// TestSignFormats signs in each format on a registry with and one without
// the referrers API, and checks where the signatures went, that Verify
// accepts each format on its own, that signing again adds nothing and
// that a second key's signatures sit next to the first's.
func TestSignFormats(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := testKeys(t)
	for _, rt := range referrerRegistries {
		for _, f := range Formats {
			t.Run(rt.name+"/"+string(f), func(t *testing.T) {
				t.Parallel()
				reg := regtest.New(t, rt.opts...)
				ref := pushIndex(t, reg, "app:1")
				o := Options{Format: f, Recursive: true}
				if _, err := Sign(ctx, ref, signer(t, a), o); err != nil {
					t.Fatal(err)
				}
				subjects := Subjects(loadSnapshot(t, ref))
				check := func(want int) {
					t.Helper()
					for _, s := range subjects {
						legacy, bundles := sigLayers(t, ref.Context(), s.Digest), len(bundleReferrers(t, ref.Context().Digest(s.Digest.String())))
						if wl, wb := boolInt(f.legacy())*want, boolInt(f.bundle())*want; legacy != wl || bundles != wb {
							t.Fatalf("%s: %d legacy signatures and %d bundles, want %d and %d", s.Digest, legacy, bundles, wl, wb)
						}
					}
				}
				check(1)
				if fs := verifyRef(t, ref, pubKey(t, a)); len(fs) != 0 {
					t.Fatalf("verify with the signing key: %v", fs)
				}
				if fs := verifyRef(t, ref, pubKey(t, b)); len(fs) != len(subjects) || fs[0].Rule != RuleBadSignature {
					t.Fatalf("verify with another key: %v, want %d bad-signature findings", fs, len(subjects))
				}
				if _, err := Sign(ctx, ref, signer(t, a), o); err != nil {
					t.Fatal(err)
				}
				check(1)
				if _, err := Sign(ctx, ref, signer(t, b), o); err != nil {
					t.Fatal(err)
				}
				check(2)
				if fs := verifyRef(t, ref, pubKey(t, a), pubKey(t, b)); len(fs) != 0 {
					t.Fatalf("verify with both keys: %v", fs)
				}
			})
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestBundleLayout checks the referrer a bundle signature is stored in
// against what cosign v3 writes, and the fallback tag on a registry
// without the referrers API.
func TestBundleLayout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, _ := testKeys(t)
	eachRegistry(t, func(t *testing.T, _ *regtest.Registry, ref name.Digest, api bool) {
		if _, err := Sign(ctx, ref, signer(t, a), Options{Format: FormatBundle}); err != nil {
			t.Fatal(err)
		}
		refs := bundleReferrers(t, ref)
		if len(refs) != 1 {
			t.Fatalf("%d bundle referrers, want 1", len(refs))
		}
		img, err := remote.Image(ref.Context().Digest(refs[0].Digest.String()))
		if err != nil {
			t.Fatal(err)
		}
		m, err := img.Manifest()
		if err != nil {
			t.Fatal(err)
		}
		desc, err := remote.Head(ref)
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprintf("%s %s %s %d %s %s %s", m.ArtifactType, m.Config.MediaType, m.Subject.Digest, m.Subject.Size,
			m.Annotations[AnnotationBundlePredicateType], m.Annotations[AnnotationBundleContent], m.Layers[0].MediaType)
		want := fmt.Sprintf("%s %s %s %d %s %s %s", BundleArtifactType, emptyMediaType, desc.Digest, desc.Size,
			CosignSignPredicateType, "dsse-envelope", BundleArtifactType)
		if got != want || len(m.Layers) != 1 {
			t.Errorf("bundle referrer:\ngot  %s\nwant %s", got, want)
		}
		tag, err := registry.ReferrersTag(ref)
		if err != nil {
			t.Fatal(err)
		}
		_, terr := remote.Head(tag)
		if (terr == nil) == api {
			t.Errorf("fallback tag %s: %v; want it only without the referrers API", tag, terr)
		}
		// The bundle holds a DSSE envelope of an in-toto statement
		// about the index, verifiable with the public key alone.
		bs, bad, err := readBundles(ctx, registry.New(), ref)
		if err != nil || len(bad) != 0 || len(bs) != 1 {
			t.Fatalf("reading bundles: %d, %v, %v", len(bs), bad, err)
		}
		if env := bs[0].GetDsseEnvelope(); env == nil || env.GetPayloadType() != inTotoPayloadType {
			t.Errorf("bundle content: %v", bs[0])
		}
		if bs[0].GetMediaType() != BundleArtifactType {
			t.Errorf("bundle media type %q", bs[0].GetMediaType())
		}
	})
}

// TestBundleTamper: a bundle that signs another digest, stored as a
// referrer of a subject, is a bad signature of it, not a pass.
func TestBundleTamper(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, _ := testKeys(t)
	eachRegistry(t, func(t *testing.T, _ *regtest.Registry, ref name.Digest, _ bool) {
		ms := children(t, ref)
		b, err := newBundle(ctx, ref.Context().Digest(ms[0].Digest.String()), signer(t, a), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := writeBundle(ctx, registry.New(), ref.Context().Digest(ms[1].Digest.String()), ms[1], b); err != nil {
			t.Fatal(err)
		}
		subjects := []Subject{{Digest: ms[1].Digest}}
		fs, err := Verify(ctx, ref.Context(), subjects, []Key{pubKey(t, a)}, VerifyOptions{})
		if err != nil || len(fs) != 1 || fs[0].Rule != RuleBadSignature {
			t.Fatalf("a bundle of another digest: %v, %v; want bad-signature", fs, err)
		}
	})
}

// TestVerifyRequests counts what Verify asks of the registry for the test
// index (the index and 4 images) signed in each format: a legacy
// signature costs the .sig tag and its payload and no referrers read, even
// next to a bundle; a bundle alone costs the .sig tag's 404, one referrers
// read (the API, or the fallback tag after one 404 of the API for the
// whole run), the bundle's manifest and its blob.
func TestVerifyRequests(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, _ := testKeys(t)
	for _, f := range Formats {
		t.Run(string(f), func(t *testing.T) {
			t.Parallel()
			eachRegistry(t, func(t *testing.T, reg *regtest.Registry, ref name.Digest, api bool) {
				if _, err := Sign(ctx, ref, signer(t, a), Options{Format: f, Recursive: true}); err != nil {
					t.Fatal(err)
				}
				subjects := Subjects(loadSnapshot(t, ref))
				want := 1 + 2*len(subjects) // GET /v2/, then the .sig tag and the payload
				if f == FormatBundle {
					want = 1 + 4*len(subjects)
					if !api {
						want++ // the referrers API's 404, once
					}
				}
				reg.ResetStats()
				fs, err := Verify(ctx, ref.Context(), subjects, []Key{pubKey(t, a)}, VerifyOptions{Registry: registry.New()})
				if err != nil || len(fs) != 0 {
					t.Fatalf("verify: %v, %v", fs, err)
				}
				if st := reg.Stats(); st.Total() != want {
					t.Errorf("verify sent %d requests, want %d: %s", st.Total(), want, st)
				}
			})
		})
	}
}

// TestVerifyBundleRegistryErrors: when the bundle store cannot be read
// (the referrers API, the fallback tag, a bundle referrer's manifest or
// its blob answers 500 past the retries), Verify fails with a registry
// error and no findings, as for the .sig tag: never unsigned.
func TestVerifyBundleRegistryErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, _ := testKeys(t)
	eachRegistry(t, func(t *testing.T, reg *regtest.Registry, ref name.Digest, api bool) {
		if _, err := Sign(ctx, ref, signer(t, a), Options{Format: FormatBundle}); err != nil {
			t.Fatal(err)
		}
		subjects := Subjects(loadSnapshot(t, ref))[:1]
		list := regtest.Fault{Kind: regtest.Fault500, Method: http.MethodGet, Suffix: "/referrers/" + ref.DigestStr()}
		if !api {
			list = regtest.Fault{Kind: regtest.Fault500, Route: regtest.RouteManifestByTag, Method: http.MethodGet,
				Suffix: strings.Replace(ref.DigestStr(), ":", "-", 1)}
		}
		for name, f := range map[string]regtest.Fault{
			"listing the referrers": list,
			"the bundle manifest":   {Kind: regtest.Fault500, Route: regtest.RouteManifestByDigest, Method: http.MethodGet},
			"the bundle blob":       {Kind: regtest.Fault500, Route: regtest.RouteBlob, Method: http.MethodGet},
		} {
			faults := regtest.NewFaults(f)
			reg.SetMiddleware(faults.Middleware)
			rc := registry.New(registry.WithRetryBase(time.Millisecond))
			fs, err := Verify(ctx, ref.Context(), subjects, []Key{pubKey(t, a)}, VerifyOptions{Registry: rc})
			reg.SetMiddleware(nil)
			if faults.Injected() == 0 || err == nil || !registry.IsRegistryError(err) || len(fs) != 0 {
				t.Errorf("500 on %s (%d injected): %v, %v; want a registry error and no findings", name, faults.Injected(), fs, err)
			}
		}
	})
}
