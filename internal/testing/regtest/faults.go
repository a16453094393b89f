package regtest

import (
	"net/http"
	"strings"
	"sync"
	"time"
)

// FaultKind is what a fault does to a request.
type FaultKind string

// Fault kinds.
const (
	// Fault500, Fault502 and Fault503 answer with that status and an OCI
	// error body.
	Fault500 FaultKind = "500"
	Fault502 FaultKind = "502"
	Fault503 FaultKind = "503"
	// Fault429 answers 429 Too Many Requests with Fault.RetryAfter.
	Fault429 FaultKind = "429"
	// FaultReset serves the headers and half the body of a GET, then resets
	// the connection; other requests are reset before any response.
	FaultReset FaultKind = "reset"
	// FaultTruncate declares the full Content-Length of a GET but writes
	// half the body.
	FaultTruncate FaultKind = "truncate"
	// FaultCorrupt serves a GET body with one byte altered, so that it no
	// longer matches its digest.
	FaultCorrupt FaultKind = "corrupt"
	// FaultSlow delays the response by Fault.Delay.
	FaultSlow FaultKind = "slow"
	// FaultAnswer answers Fault.Status with Fault.Body (Content-Type
	// Fault.ContentType, application/json when empty) instead of the
	// registry: a real registry's or proxy's answer that the in-process
	// registry never gives (an immutability refusal, an HTML 404). The
	// registry never sees the request. It is not in FaultKinds, whose
	// tables inject transport failures.
	FaultAnswer FaultKind = "answer"
)

// FaultKinds lists every kind, in a stable order for tables.
var FaultKinds = []FaultKind{Fault500, Fault502, Fault503, Fault429, FaultReset, FaultTruncate, FaultCorrupt, FaultSlow}

// Route selects registry requests by the API path they use.
type Route string

// Routes.
const (
	RouteAny              Route = ""                // every request
	RouteManifest         Route = "manifest"        // /v2/<repo>/manifests/<ref>
	RouteManifestByTag    Route = "manifest-tag"    // ... where ref is a tag
	RouteManifestByDigest Route = "manifest-digest" // ... where ref is a digest
	RouteBlob             Route = "blob"            // /v2/<repo>/blobs/<digest>
	RouteUpload           Route = "upload"          // /v2/<repo>/blobs/uploads/...
)

// Fault says which requests fail and how. The zero counts fault every
// matching request.
type Fault struct {
	Kind FaultKind
	// Route and Method ("" for any) select the requests.
	Route  Route
	Method string
	// Repo, when set, limits the fault to one repository.
	Repo string
	// Suffix, when set, limits the fault to request paths that end with it,
	// e.g. ".sig" for cosign signature tags.
	Suffix string
	// First faults only the first First matching requests.
	First int
	// Every faults every Every-th matching request (the Every-th, the
	// 2*Every-th...).
	Every int
	// After lets the first After matching requests through before the
	// fault starts counting, to fail half-way.
	After int
	// RetryAfter is the Retry-After header of a 429 (default "1").
	RetryAfter string
	// Delay is the delay of FaultSlow (default 50ms).
	Delay time.Duration
	// Status, ContentType and Body are the answer of FaultAnswer.
	Status      int
	ContentType string
	Body        string
}

// matches reports whether the fault applies to a request's route.
func (f *Fault) matches(req *http.Request) bool {
	if f.Method != "" && f.Method != req.Method {
		return false
	}
	if f.Suffix != "" && !strings.HasSuffix(req.URL.Path, f.Suffix) {
		return false
	}
	k, repo := classify(req.URL.Path)
	if f.Repo != "" && f.Repo != repo {
		return false
	}
	switch f.Route {
	case RouteAny:
		return true
	case RouteManifest:
		return k == kindManifest
	case RouteManifestByTag, RouteManifestByDigest:
		ref := req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:]
		return k == kindManifest && strings.Contains(ref, ":") == (f.Route == RouteManifestByDigest)
	case RouteBlob:
		return k == kindBlob
	case RouteUpload:
		return k == kindUpload
	}
	return false
}

// due reports whether the n-th matching request (from 1) is faulted.
func (f *Fault) due(n int) bool {
	if n <= f.After {
		return false
	}
	n -= f.After
	switch {
	case f.First > 0:
		return n <= f.First
	case f.Every > 0:
		return n%f.Every == 0
	}
	return true
}

// Faults injects faults into a registry's requests. Install its Middleware
// with WithMiddleware or SetMiddleware; it is safe for concurrent use.
type Faults struct {
	mu       sync.Mutex
	specs    []Fault
	seen     []int
	injected map[FaultKind]int
}

// NewFaults returns an injector of specs; the first spec a request matches
// and is due for decides.
func NewFaults(specs ...Fault) *Faults {
	return &Faults{specs: specs, seen: make([]int, len(specs)), injected: map[FaultKind]int{}}
}

// pick returns the fault due for req, or nil.
func (f *Faults) pick(req *http.Request) *Fault {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.specs {
		s := &f.specs[i]
		if !s.matches(req) {
			continue
		}
		f.seen[i]++
		if s.due(f.seen[i]) {
			return s
		}
	}
	return nil
}

func (f *Faults) record(k FaultKind) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.injected[k]++
}

// Injected returns how many faults were injected in all.
func (f *Faults) Injected() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.injected {
		n += c
	}
	return n
}

// InjectedKind returns how many faults of kind k were injected.
func (f *Faults) InjectedKind(k FaultKind) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.injected[k]
}

// Middleware wraps a registry handler with the faults.
func (f *Faults) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		s := f.pick(req)
		if s == nil {
			next.ServeHTTP(w, req)
			return
		}
		s.apply(w, req, next, func() { f.record(s.Kind) })
	})
}
