package transport

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// guardTransport is the base of every registry client of a run. It counts
// requests; enforces the plain-HTTP rule (go-containerregistry falls back to
// HTTP for private RFC 1918 addresses too, which imgctl allows only for
// loopback or with --insecure); re-sends a request after the Retry-After a
// 429 or 503 asks for, within a cap; and reads manifests and small blobs
// whole (see readBody), so that the retries above it see a cut connection,
// an oversized manifest or content that does not match its digest as an
// error of the request; and judges what a 404 and a refused tag PUT mean
// (see judge), once for every reader and writer of the run.
type guardTransport struct {
	// sent remembers requests with a body that went out once, so that a
	// retry layer above re-sending the same *http.Request gets a fresh body.
	sent          sync.Map
	next          http.RoundTripper
	n             *atomic.Int64
	insecure      bool
	retryAfterMax time.Duration
	// paused holds back every request to a registry that asked for a
	// Retry-After (see pauses).
	paused pauses
}

// RoundTrip sends one request, re-sending it after a Retry-After.
func (g *guardTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Scheme == "http" && !g.insecure && !IsLoopback(r.URL.Host) {
		closeBody(r)
		return nil, fmt.Errorf("%s: %w", r.URL.Host, ErrPlainHTTP)
	}
	for attempt := 0; ; attempt++ {
		if err := g.paused.wait(r.Context(), r.URL.Host); err != nil {
			closeBody(r)
			return nil, fmt.Errorf("waiting for %s's Retry-After: %w", r.URL.Host, err)
		}
		resp, err := g.send(r, attempt > 0 || g.seen(r))
		if err != nil {
			return nil, err
		}
		wait, ok := retryAfter(resp, g.retryAfterMax)
		if !ok || attempt == retryAfterResends || !rewindable(r) {
			resp, err := readBody(r, resp)
			return judge(r, resp, err)
		}
		resp.Body.Close()
		g.paused.hold(r.URL.Host, wait)
		if err := sleep(r.Context(), wait); err != nil {
			return nil, fmt.Errorf("waiting %s to retry %s %s: %w", wait, r.Method, r.URL.Redacted(), err)
		}
	}
}

// judge passes a response on, or returns the error it stands for: a 404
// that is not a registry's "unknown" (notFound) or a registry's refusal to
// change a tag it holds immutable (immutableRefusal). Neither is retried.
func judge(r *http.Request, resp *http.Response, err error) (*http.Response, error) {
	if err != nil {
		return nil, err
	}
	for _, check := range []func(*http.Request, *http.Response) error{notFound, immutableRefusal} {
		if err := check(r, resp); err != nil {
			return nil, err
		}
	}
	return resp, nil
}

// seen reports whether r, a request with a body, was sent before, and
// remembers it.
func (g *guardTransport) seen(r *http.Request) bool {
	if r.Body == nil || r.Body == http.NoBody {
		return false
	}
	_, loaded := g.sent.LoadOrStore(r, struct{}{})
	return loaded
}

// send sends r once. A re-send takes a fresh body when the request can make
// one, so that a retried PUT sends its bytes again; the first attempt sends
// r.Body as it is, because GetBody on a streamed upload would open the source
// blob a second time (and hold a second read slot while the first waits).
func (g *guardTransport) send(r *http.Request, resend bool) (*http.Response, error) {
	g.n.Add(1)
	if !resend || r.GetBody == nil || r.Body == nil || r.Body == http.NoBody {
		return g.next.RoundTrip(r)
	}
	body, err := r.GetBody()
	if err != nil {
		return nil, fmt.Errorf("rewinding the body of %s %s: %w", r.Method, r.URL.Redacted(), err)
	}
	r.Body.Close()
	r2 := r.Clone(r.Context())
	r2.Body = body
	return g.next.RoundTrip(r2)
}

// rewindable reports whether r can be sent again.
func rewindable(r *http.Request) bool {
	return r.Body == nil || r.Body == http.NoBody || r.GetBody != nil
}

func closeBody(r *http.Request) {
	if r.Body != nil {
		r.Body.Close()
	}
}

// forgetting sits above the retry layer: once a request and all its
// retries are done, the guard forgets it (see guardTransport.sent), so
// that a long run (imgctl patch over a thousand images) does not keep
// every request with a body it ever sent.
type forgetting struct {
	next  http.RoundTripper
	guard *guardTransport
}

// RoundTrip sends r with its retries, then forgets it.
func (f forgetting) RoundTrip(r *http.Request) (*http.Response, error) {
	defer f.guard.sent.Delete(r)
	return f.next.RoundTrip(r)
}
