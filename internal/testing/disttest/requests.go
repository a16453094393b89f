package disttest

import (
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// Request is one request the proxy received, with the status it answered
// (0 when the connection broke before a response).
type Request struct {
	Method, Path, Query string
	Status              int
}

// String returns "METHOD PATH?QUERY STATUS".
func (q Request) String() string {
	p := q.Path
	if q.Query != "" {
		p += "?" + q.Query
	}
	return fmt.Sprintf("%s %s %d", q.Method, p, q.Status)
}

// requestLog records requests as they complete.
type requestLog struct {
	mu   sync.Mutex
	reqs []Request
}

func (l *requestLog) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		sw := &regtest.CountingWriter{ResponseWriter: w}
		defer func() {
			l.mu.Lock()
			l.reqs = append(l.reqs, Request{Method: req.Method, Path: req.URL.Path, Query: req.URL.RawQuery, Status: sw.Written()})
			l.mu.Unlock()
		}()
		next.ServeHTTP(sw, req)
	})
}

// Requests returns the requests received since the start or the last
// ResetRequests, in the order they completed.
func (r *Registry) Requests() []Request {
	r.log.mu.Lock()
	defer r.log.mu.Unlock()
	return append([]Request(nil), r.log.reqs...)
}

// ResetRequests forgets the recorded requests.
func (r *Registry) ResetRequests() {
	r.log.mu.Lock()
	defer r.log.mu.Unlock()
	r.log.reqs = nil
}

// Count returns how many recorded requests have method ("" for any) and a
// path containing pathPart.
func (r *Registry) Count(method, pathPart string) int {
	n := 0
	for _, q := range r.Requests() {
		if (method == "" || q.Method == method) && strings.Contains(q.Path, pathPart) {
			n++
		}
	}
	return n
}
