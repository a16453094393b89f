package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// putArtifact writes a referrer of subject with artifactType at, through
// PutReferrer (the fallback tag where the API is missing).
func putArtifact(t *testing.T, c *Client, subject name.Digest, sd v1.Hash, at string) v1.Hash {
	t.Helper()
	ctx := context.Background()
	cfg := []byte("{}")
	h, _, err := v1.SHA256(bytes.NewReader(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Copier(subject.Context()).UploadBytes(ctx, h, cfg); err != nil {
		t.Fatal(err)
	}
	m := v1.Manifest{SchemaVersion: 2, MediaType: types.OCIManifestSchema1, ArtifactType: at,
		Config:  v1.Descriptor{MediaType: "application/vnd.oci.empty.v1+json", Digest: h, Size: int64(len(cfg))},
		Layers:  []v1.Descriptor{},
		Subject: &v1.Descriptor{MediaType: types.OCIImageIndex, Digest: sd, Size: 1}}
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.PutReferrer(ctx, subject.Context(), RawManifest{Raw: raw, Type: types.OCIManifestSchema1}, true); err != nil {
		t.Fatal(err)
	}
	d, _, _ := v1.SHA256(bytes.NewReader(raw))
	return d
}

// TestReferrers lists referrers by artifact type through the referrers API
// and, on a registry without it, through the fallback tag, with one read
// per subject once the first has told whether the API is there.
func TestReferrers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts []regtest.Option
		api  bool
	}{{"referrers API", []regtest.Option{regtest.WithReferrers()}, true}, {"fallback tag", nil, false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			reg := regtest.New(t, tc.opts...)
			repo := regtest.Must(reg.Repo("app"))(t)
			var subjects []name.Digest
			for _, seed := range []string{"a", "b", "c"} {
				_, d := pushedIndex(t, repo, seed)
				subjects = append(subjects, repo.Digest(d.String()))
			}
			sd := regtest.Must(v1.NewHash(subjects[0].DigestStr()))(t)
			sig := putArtifact(t, New(), subjects[0], sd, "application/x-sig")
			putArtifact(t, New(), subjects[0], sd, "application/x-other")

			reg.ResetStats()
			c := New()
			for i, s := range subjects {
				got, err := c.Referrers(ctx, s, "application/x-sig")
				if err != nil {
					t.Fatal(err)
				}
				if i == 0 && (len(got) != 1 || got[0].Digest != sig || got[0].ArtifactType != "application/x-sig") {
					t.Fatalf("referrers of the signed subject: %+v, want the one of type application/x-sig (%s)", got, sig)
				}
				if i > 0 && len(got) != 0 {
					t.Fatalf("referrers of an unsigned subject: %+v", got)
				}
			}
			if all, err := c.Referrers(ctx, subjects[0], ""); err != nil || len(all) != 2 {
				t.Fatalf("every referrer: %+v, %v", all, err)
			}
			// One GET /v2/ then, per subject, one referrers GET (the API)
			// or one fallback tag GET after the first subject's 404.
			st := reg.Stats()
			wantOther, wantManifests := 1+4, 0
			if !tc.api {
				wantOther, wantManifests = 1+1, 4
			}
			if st.Other != wantOther || st.Manifests != wantManifests || st.Total() != wantOther+wantManifests {
				t.Errorf("requests: %s; want %d other (ping, referrers) and %d manifest GETs", st, wantOther, wantManifests)
			}
		})
	}
}

// TestReferrersFaults: a registry error reading the referrers is an
// error, never "no referrers"; an HTML 404 from the referrers API (a proxy
// that does not route it) means the API is missing.
func TestReferrersFaults(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	reg := regtest.New(t)
	repo := regtest.Must(reg.Repo("app"))(t)
	_, d := pushedIndex(t, repo, "a")
	subject := repo.Digest(d.String())
	putArtifact(t, New(), subject, d, "application/x-sig")
	fast := func() *Client { return New(WithRetryBase(time.Millisecond), WithRetryAfterMax(time.Millisecond)) }

	reg.SetMiddleware(regtest.NewFaults(regtest.Fault{Kind: regtest.Fault500, Suffix: "/referrers/" + d.String()}).Middleware)
	if _, err := fast().Referrers(ctx, subject, ""); err == nil || !IsRegistryError(err) {
		t.Errorf("500 from the referrers API: %v, want a registry error", err)
	}
	reg.SetMiddleware(regtest.NewFaults(regtest.Fault{Kind: regtest.Fault500, Route: regtest.RouteManifestByTag}).Middleware)
	if _, err := fast().Referrers(ctx, subject, ""); err == nil || !IsRegistryError(err) {
		t.Errorf("500 from the fallback tag: %v, want a registry error", err)
	}
	reg.SetMiddleware(regtest.NewFaults(regtest.Fault{Kind: regtest.FaultAnswer, Suffix: "/referrers/" + d.String(),
		Status: http.StatusNotFound, ContentType: "text/html", Body: "<html>404</html>"}).Middleware)
	if got, err := fast().Referrers(ctx, subject, "application/x-sig"); err != nil || len(got) != 1 {
		t.Errorf("HTML 404 from the referrers API: %+v, %v; want the fallback tag read", got, err)
	}
	reg.SetMiddleware(nil)
}
