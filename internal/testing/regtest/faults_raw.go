package regtest

import (
	"bytes"
	"net/http"
	"strconv"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// RawContent serves bytes the registry would refuse or that no fixture can
// build (malformed JSON, unknown media types, oversized or inconsistent
// manifests) as manifests and blobs of a repository. Requests for anything
// else go to the registry. Install its Middleware with WithMiddleware or
// SetMiddleware.
type RawContent struct {
	mu    sync.RWMutex
	items map[string]rawItem // by URL path
}

type rawItem struct {
	mediaType string
	body      []byte
	digest    string
}

func (c *RawContent) add(path, mediaType, digest string, body []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.items == nil {
		c.items = map[string]rawItem{}
	}
	c.items[path] = rawItem{mediaType: mediaType, body: body, digest: digest}
}

// Manifest serves body with Content-Type mediaType as the manifest
// repo:tag and repo@digest, and returns the digest.
func (c *RawContent) Manifest(repo, tag, mediaType string, body []byte) v1.Hash {
	h, _, _ := v1.SHA256(bytes.NewReader(body))
	for _, ref := range []string{tag, h.String()} {
		c.add("/v2/"+repo+"/manifests/"+ref, mediaType, h.String(), body)
	}
	return h
}

// Blob serves body as a blob of repo and returns its digest.
func (c *RawContent) Blob(repo string, body []byte) v1.Hash {
	h, _, _ := v1.SHA256(bytes.NewReader(body))
	c.add("/v2/"+repo+"/blobs/"+h.String(), "application/octet-stream", h.String(), body)
	return h
}

// Middleware wraps a registry handler with the raw content.
func (c *RawContent) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.RLock()
		it, ok := c.items[r.URL.Path]
		c.mu.RUnlock()
		if !ok || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", it.mediaType)
		w.Header().Set("Docker-Content-Digest", it.digest)
		w.Header().Set("Content-Length", strconv.Itoa(len(it.body)))
		if r.Method == http.MethodGet {
			_, _ = w.Write(it.body)
		}
	})
}
