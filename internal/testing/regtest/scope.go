package regtest

import (
	"net/http"
	"strings"
	"sync"
)

// scope gives blobs per-repository visibility and implements cross-repository
// mounts, which go-containerregistry's pkg/registry lacks: its blob store is
// global, so every blob would exist in every repository and clients would
// never mount. Like distribution, a blob is visible in a repository only after
// it was uploaded to or mounted into it.
type scope struct {
	mu    sync.Mutex
	links map[string]map[string]bool // repo -> digest -> linked
}

func newScope() *scope {
	return &scope{links: map[string]map[string]bool{}}
}

func (s *scope) linked(repo, digest string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.links[repo][digest]
}

func (s *scope) link(repo, digest string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.links[repo] == nil {
		s.links[repo] = map[string]bool{}
	}
	s.links[repo][digest] = true
}

// middleware hides blobs of other repositories, answers mounts and records
// which blobs each upload links into its repository.
func (s *scope) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		k, repo := classify(req.URL.Path)
		switch {
		case k == kindBlob && (req.Method == http.MethodGet || req.Method == http.MethodHead):
			digest := req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:]
			if !s.linked(repo, digest) {
				writeError(w, http.StatusNotFound, "BLOB_UNKNOWN", "blob unknown to repository")
				return
			}
		case k == kindUpload && req.Method == http.MethodPost:
			q := req.URL.Query()
			if mount, from := q.Get("mount"), q.Get("from"); mount != "" && from != "" && s.linked(from, mount) {
				s.link(repo, mount)
				w.Header().Set("Location", "/v2/"+repo+"/blobs/"+mount)
				w.Header().Set("Docker-Content-Digest", mount)
				w.WriteHeader(http.StatusCreated)
				return
			}
		}
		cw := &CountingWriter{ResponseWriter: w}
		next.ServeHTTP(cw, req)
		if k == kindUpload && (req.Method == http.MethodPut || req.Method == http.MethodPost) &&
			cw.status == http.StatusCreated {
			if d := req.URL.Query().Get("digest"); d != "" {
				s.link(repo, d)
			}
		}
	})
}

// writeError writes an OCI distribution error response.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(`{"errors":[{"code":"` + code + `","message":"` + msg + `"}]}`))
}
