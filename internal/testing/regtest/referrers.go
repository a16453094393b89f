package regtest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// referrersAPI makes go-containerregistry's referrers API (v0.22.1) answer
// as the OCI distribution spec 1.1 says: pkg/registry reports every
// referrer's artifactType as its config media type, even when the manifest
// has an artifactType (cosign v3's bundles: config
// application/vnd.oci.empty.v1+json, artifactType
// application/vnd.dev.sigstore.bundle.v0.3+json), and ignores the
// artifactType filter. This handler takes the manifest's artifactType when
// it has one, applies the filter and says so in OCI-Filters-Applied, as
// registries that serve the API do.
func referrersAPI(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := strings.LastIndex(r.URL.Path, "/referrers/")
		if r.Method != http.MethodGet || i < 0 {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		var im v1.IndexManifest
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &im) != nil {
			copyResponse(w, rec)
			return
		}
		base := r.URL.Path[:i]
		filter := r.URL.Query().Get("artifactType")
		kept := im.Manifests[:0]
		for _, d := range im.Manifests {
			if at := manifestArtifactType(next, base, d.Digest.String()); at != "" {
				d.ArtifactType = at
			}
			if filter == "" || d.ArtifactType == filter {
				kept = append(kept, d)
			}
		}
		im.Manifests = kept
		b, err := json.Marshal(im)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", rec.Header().Get("Content-Type"))
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		if filter != "" {
			w.Header().Set("OCI-Filters-Applied", "artifactType")
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(b)
	})
}

// manifestArtifactType reads the artifactType of manifest digest of the
// repository at base (/v2/<repo>) from the registry itself, "" when it has
// none.
func manifestArtifactType(h http.Handler, base, digest string) string {
	req := httptest.NewRequest(http.MethodGet, base+"/manifests/"+digest, nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var m struct {
		ArtifactType string `json:"artifactType"`
	}
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &m) != nil {
		return ""
	}
	return m.ArtifactType
}

func copyResponse(w http.ResponseWriter, rec *httptest.ResponseRecorder) {
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = io.Copy(w, bytes.NewReader(rec.Body.Bytes()))
}
