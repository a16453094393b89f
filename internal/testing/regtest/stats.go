package regtest

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// Stats counts the requests a Registry has served since it started or since
// the last ResetStats. Requests are counted as they arrive, before any
// middleware, so requests failed by a fault injector are counted too.
type Stats struct {
	// Requests by HTTP method. OtherMethod counts anything else.
	Get, Head, Put, Post, Patch, Delete, OtherMethod int

	// Requests by kind, from the URL path.
	Manifests int // /v2/<repo>/manifests/<ref>
	Blobs     int // /v2/<repo>/blobs/<digest>
	Uploads   int // /v2/<repo>/blobs/uploads/...
	Tags      int // /v2/<repo>/tags/list
	Other     int // /v2/, referrers, catalog and anything else

	// BlobBytesSent is the number of bytes of GET blob response bodies.
	BlobBytesSent int64
	// BlobBytesReceived is the number of bytes of upload request bodies
	// (PATCH, PUT and monolithic POST).
	BlobBytesReceived int64
	// Mounts counts cross-repository mounts that answered 201 Created.
	Mounts int
}

// Total returns the total number of requests.
func (s Stats) Total() int {
	return s.Get + s.Head + s.Put + s.Post + s.Patch + s.Delete + s.OtherMethod
}

// String summarises s on one line.
func (s Stats) String() string {
	return fmt.Sprintf("requests=%d (GET=%d HEAD=%d PUT=%d POST=%d PATCH=%d DELETE=%d other=%d) "+
		"manifests=%d blobs=%d uploads=%d tags=%d other=%d sent=%dB received=%dB mounts=%d",
		s.Total(), s.Get, s.Head, s.Put, s.Post, s.Patch, s.Delete, s.OtherMethod,
		s.Manifests, s.Blobs, s.Uploads, s.Tags, s.Other,
		s.BlobBytesSent, s.BlobBytesReceived, s.Mounts)
}

// kind is the class of a registry API path.
type kind int

const (
	kindOther kind = iota
	kindManifest
	kindBlob
	kindUpload
	kindTags
)

// classify returns the kind of a request path and the repository it names.
func classify(p string) (kind, string) {
	rest, ok := strings.CutPrefix(p, "/v2/")
	if !ok {
		return kindOther, ""
	}
	for _, c := range []struct {
		sep string
		k   kind
	}{
		{"/blobs/uploads", kindUpload},
		{"/manifests/", kindManifest},
		{"/blobs/", kindBlob},
		{"/tags/list", kindTags},
	} {
		if i := strings.LastIndex(rest, c.sep); i > 0 {
			return c.k, rest[:i]
		}
	}
	return kindOther, ""
}

// recorder accumulates Stats under a mutex.
type recorder struct {
	mu sync.Mutex
	s  Stats
}

func (r *recorder) snapshot() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.s
}

func (r *recorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.s = Stats{}
}

func (r *recorder) update(f func(*Stats)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(&r.s)
}

// countRequest records the method and kind of a request as it arrives.
func (r *recorder) countRequest(method string, k kind) {
	r.update(func(s *Stats) { s.count(method, k) })
}

// Count adds a request with method for the URL path p to s, by method and
// by kind, as a Registry counts the requests it serves: for counts of
// requests recorded elsewhere (such as disttest's proxy).
func (s *Stats) Count(method, p string) {
	k, _ := classify(p)
	s.count(method, k)
}

func (s *Stats) count(method string, k kind) {
	switch method {
	case http.MethodGet:
		s.Get++
	case http.MethodHead:
		s.Head++
	case http.MethodPut:
		s.Put++
	case http.MethodPost:
		s.Post++
	case http.MethodPatch:
		s.Patch++
	case http.MethodDelete:
		s.Delete++
	default:
		s.OtherMethod++
	}
	switch k {
	case kindManifest:
		s.Manifests++
	case kindBlob:
		s.Blobs++
	case kindUpload:
		s.Uploads++
	case kindTags:
		s.Tags++
	default:
		s.Other++
	}
}

// middleware counts every request and wraps the body and response writer
// to count blob bytes in both directions.
func (r *recorder) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		k, _ := classify(req.URL.Path)
		r.countRequest(req.Method, k)

		cw := &CountingWriter{ResponseWriter: w}
		var body *countingReader
		if k == kindUpload && req.Body != nil {
			body = &countingReader{ReadCloser: req.Body}
			req.Body = body
		}
		next.ServeHTTP(cw, req)

		r.update(func(s *Stats) {
			if k == kindBlob && req.Method == http.MethodGet {
				s.BlobBytesSent += cw.n
			}
			if body != nil {
				s.BlobBytesReceived += body.n
			}
			q := req.URL.Query()
			if k == kindUpload && req.Method == http.MethodPost && cw.status == http.StatusCreated &&
				q.Get("mount") != "" && q.Get("from") != "" {
				s.Mounts++
			}
		})
	})
}

// CountingWriter is an http.ResponseWriter that records the status and the
// number of body bytes written, for middleware that measures a registry.
type CountingWriter struct {
	http.ResponseWriter
	status int
	n      int64
}

func (w *CountingWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *CountingWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.n += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *CountingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Status returns the status written, 200 when only a body was written.
func (w *CountingWriter) Status() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}

// Bytes returns the number of body bytes written.
func (w *CountingWriter) Bytes() int64 { return w.n }

// Written returns the status written, 0 when nothing was (a handler that
// broke the connection before answering).
func (w *CountingWriter) Written() int { return w.status }

// countingReader counts the bytes read from a request body.
type countingReader struct {
	io.ReadCloser
	n int64
}

func (r *countingReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	r.n += int64(n)
	return n, err
}
