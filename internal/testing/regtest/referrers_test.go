package regtest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// TestReferrersArtifactType: with WithReferrers, the referrers API names a
// referrer's artifactType as the spec says (the manifest's, over its
// config media type) and applies the artifactType filter.
func TestReferrersArtifactType(t *testing.T) {
	t.Parallel()
	reg := New(t, WithReferrers())
	ref, d, err := reg.PushTag("app:1", Must(LinuxImage("amd64"))(t))
	if err != nil {
		t.Fatal(err)
	}
	repo := ref.Context()
	cfg := static.NewLayer([]byte("{}"), "application/vnd.oci.empty.v1+json")
	if err := remote.WriteLayer(repo, cfg); err != nil {
		t.Fatal(err)
	}
	desc := Must(remote.Head(repo.Digest(d.String())))(t)
	m := v1.Manifest{SchemaVersion: 2, MediaType: types.OCIManifestSchema1, ArtifactType: "application/x-bundle",
		Config:  v1.Descriptor{MediaType: "application/vnd.oci.empty.v1+json", Digest: Must(cfg.Digest())(t), Size: 2},
		Layers:  []v1.Descriptor{},
		Subject: &v1.Descriptor{MediaType: desc.MediaType, Digest: desc.Digest, Size: desc.Size}}
	raw := Must(json.Marshal(m))(t)
	rd, _, _ := v1.SHA256(bytes.NewReader(raw))
	req := Must(http.NewRequest(http.MethodPut, reg.URL()+"/v2/app/manifests/"+rd.String(), bytes.NewReader(raw)))(t)
	req.Header.Set("Content-Type", string(types.OCIManifestSchema1))
	resp := Must(http.DefaultClient.Do(req))(t)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("PUT referrer: %s", resp.Status)
	}
	for _, tc := range []struct {
		query string
		want  int
	}{{"", 1}, {"?artifactType=application/x-bundle", 1}, {"?artifactType=application/vnd.oci.empty.v1+json", 0}} {
		resp := Must(http.Get(reg.URL() + "/v2/app/referrers/" + d.String() + tc.query))(t)
		var im v1.IndexManifest
		err := json.NewDecoder(resp.Body).Decode(&im)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || len(im.Manifests) != tc.want {
			t.Fatalf("referrers%s: %s, %+v, %v; want %d", tc.query, resp.Status, im.Manifests, err, tc.want)
		}
		if tc.want == 1 && (im.Manifests[0].ArtifactType != "application/x-bundle" || im.Manifests[0].Digest != rd) {
			t.Errorf("referrers%s: %+v, want %s with artifactType application/x-bundle", tc.query, im.Manifests[0], rd)
		}
		if applied := resp.Header.Get("OCI-Filters-Applied"); (applied != "") != (tc.query != "") {
			t.Errorf("referrers%s: OCI-Filters-Applied %q", tc.query, applied)
		}
	}
}
