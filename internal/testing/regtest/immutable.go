package regtest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
)

// ImmutableTags is a middleware that makes the registry hold every tag
// immutable as Harbor does under a tag immutability rule: a PUT of a
// manifest by a tag that exists answers 412 PRECONDITION "configured as
// immutable"; a new tag, and a manifest by digest, are written. It covers
// the tags a rule for "**" covers: release tags, cosign's
// sha256-<digest>.sig tags and the referrers fallback tags sha256-<digest>.
func ImmutableTags(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		repo, ref, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/v2/"), "/manifests/")
		if r.Method == http.MethodPut && ok && !strings.Contains(ref, ":") {
			head := httptest.NewRecorder()
			next.ServeHTTP(head, httptest.NewRequest(http.MethodHead, r.URL.Path, nil))
			if head.Code == http.StatusOK {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusPreconditionFailed)
				fmt.Fprintf(w, `{"errors":[{"code":"PRECONDITION","message":"Failed to process request due to '%s:%s' configured as immutable."}]}`, repo, ref)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}
