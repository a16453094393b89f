package regtest

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
)

// TagRace plays another publisher of the same tag: right after a client's
// PUT of Repo:Tag succeeds, and before the client sees the response, it
// PUTs Manifest (with MediaType) under the same tag, once. Install its
// Middleware with WithMiddleware or SetMiddleware. The manifest's children
// or blobs must already be in the repository.
type TagRace struct {
	Repo, Tag string
	MediaType string
	Manifest  []byte

	raced atomic.Bool
}

// Raced reports whether it overwrote the tag.
func (t *TagRace) Raced() bool { return t.raced.Load() }

// Middleware wraps a registry handler with the race.
func (t *TagRace) Middleware(next http.Handler) http.Handler {
	path := "/v2/" + t.Repo + "/manifests/" + t.Tag
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPut || r.URL.Path != path || t.raced.Load() {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		if rec.Code == http.StatusCreated && t.raced.CompareAndSwap(false, true) {
			other := httptest.NewRequest(http.MethodPut, path, bytes.NewReader(t.Manifest))
			other.Header.Set("Content-Type", t.MediaType)
			other.Header.Set("Content-Length", strconv.Itoa(len(t.Manifest)))
			orec := httptest.NewRecorder()
			next.ServeHTTP(orec, other)
			if orec.Code != http.StatusCreated {
				http.Error(w, "regtest: the racing PUT failed: "+orec.Body.String(), http.StatusInternalServerError)
				return
			}
		}
		copyHeader(w.Header(), rec.Header())
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	})
}
