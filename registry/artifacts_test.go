package registry

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// TestCopyArtifactsReferrersFallback: a source registry without the
// referrers API answers 404 there, whether as a registry (the in-process
// one, like the CNCF distribution registry) or as an HTML page from a
// proxy that does not route the path; either means "use the
// sha256-<digest> fallback tag", so the referrer written there is copied.
// A referrers API that fails (500 past the retries) is an error, never "no
// referrers".
func TestCopyArtifactsReferrersFallback(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		answer  func(http.ResponseWriter)
		wantErr bool
	}{
		{"registry 404", nil, false},
		{"HTML 404 from a proxy", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(proxyPage))
		}, false},
		{"500", func(w http.ResponseWriter) { http.Error(w, "injected", http.StatusInternalServerError) }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, other := regtest.New(t), regtest.New(t)
			src := regtest.Must(reg.Repo("src"))(t)
			dst := regtest.Must(other.Repo("dst"))(t)
			m, d := pushedIndex(t, src, "referrers")
			regtest.MustPush(t, dst.Digest(d.String()), regtest.Must(remote.Index(src.Digest(d.String())))(t))
			img := regtest.Must(regtest.LinuxImage("amd64", regtest.WithSeed("ref")))(t)
			regtest.MustPush(t, src.Digest(regtest.Must(img.Digest())(t).String()), img)
			ref := referrerOf(t, img, d, m)
			if err := New().PutReferrer(ctx, src, ref, true); err != nil {
				t.Fatal(err)
			}
			if tc.answer != nil {
				reg.SetMiddleware(func(next http.Handler) http.Handler {
					return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						if strings.Contains(r.URL.Path, "/referrers/") {
							tc.answer(w)
							return
						}
						next.ServeHTTP(w, r)
					})
				})
			}
			res, err := New(WithRetryBase(time.Millisecond)).CopyArtifacts(ctx, src, dst, []v1.Hash{d}, ArtifactOptions{})
			if tc.wantErr {
				if err == nil || !IsRegistryError(err) {
					t.Fatalf("referrers API failing: %+v, %v; want a registry error", res, err)
				}
				return
			}
			if err != nil || res.Referrers != 1 {
				t.Fatalf("copied %+v, %v; want the fallback tag's one referrer", res, err)
			}
		})
	}
}

// TestCopyArtifactsUnexpectedNotFound: a signature tag whose read answers a
// 404 that is not the registry's "manifest unknown" (NAME_UNKNOWN for a
// repository imgctl just read from, an HTML page) fails the copy instead of
// skipping the tag and leaving the release unsigned.
func TestCopyArtifactsUnexpectedNotFound(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ name, ct, body string }{
		{"NAME_UNKNOWN", "application/json", `{"errors":[{"code":"NAME_UNKNOWN","message":"repository name not known to registry"}]}`},
		{"HTML", "text/html", proxyPage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := regtest.New(t)
			src := regtest.Must(reg.Repo("src"))(t)
			dst := regtest.Must(reg.Repo("dst"))(t)
			_, d := pushedIndex(t, src, "sig")
			regtest.MustPush(t, SignatureTag(src, d, "sig"), regtest.Must(regtest.LinuxImage("amd64", regtest.WithSeed("sig")))(t))
			reg.SetMiddleware(regtest.NewFaults(regtest.Fault{Kind: regtest.FaultAnswer, Route: regtest.RouteManifestByTag,
				Method: http.MethodGet, Repo: "src", Suffix: ".sig", Status: http.StatusNotFound, ContentType: tc.ct, Body: tc.body}).Middleware)
			res, err := New().CopyArtifacts(ctx, src, dst, []v1.Hash{d}, ArtifactOptions{})
			if !errors.Is(err, ErrUnexpectedNotFound) {
				t.Fatalf("copied %+v, %v; want ErrUnexpectedNotFound", res, err)
			}
		})
	}
}

// referrerOf is a manifest with subject d (of media type and bytes m):
// img's manifest with the subject set.
func referrerOf(t *testing.T, img interface{ Manifest() (*v1.Manifest, error) }, d v1.Hash, m RawManifest) RawManifest {
	t.Helper()
	mf := regtest.Must(img.Manifest())(t).DeepCopy()
	mf.Subject = &v1.Descriptor{MediaType: m.Type, Digest: d, Size: int64(len(m.Raw))}
	mf.MediaType = types.OCIManifestSchema1
	return RawManifest{Raw: regtest.Must(json.Marshal(mf))(t), Type: types.OCIManifestSchema1}
}
