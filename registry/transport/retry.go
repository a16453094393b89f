package transport

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	gtransport "github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// Retry settings. Production uses the defaults; tests shorten them through
// the environment so that a persistent fault fails in milliseconds.
const (
	// DefaultRetryBase is the first delay between retries; it doubles up to
	// 25 times itself, over at most retrySteps attempts (about 3 s in all).
	DefaultRetryBase = 200 * time.Millisecond
	// DefaultRetryAfterMax caps the wait a Retry-After header asks for.
	DefaultRetryAfterMax = 10 * time.Second
	// EnvRetryBase overrides DefaultRetryBase with a Go duration ("10ms").
	EnvRetryBase = "IMGCTL_RETRY_BASE"
	// EnvRetryAfterMax overrides DefaultRetryAfterMax with a Go duration.
	EnvRetryAfterMax = "IMGCTL_RETRY_AFTER_MAX"

	retrySteps = 5
	// retryAfterResends bounds how often one request is re-sent after a
	// Retry-After before the backoff takes over.
	retryAfterResends = 2
)

// retryStatusCodes are the responses retried with backoff.
var retryStatusCodes = []int{http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
	http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout}

// durationSetting returns v when positive, else the environment variable
// env when it holds a positive duration, else def.
func durationSetting(v time.Duration, env string, def time.Duration) time.Duration {
	if v > 0 {
		return v
	}
	if d, err := time.ParseDuration(os.Getenv(env)); err == nil && d > 0 {
		return d
	}
	return def
}

func (s *Session) retryAfterMaxValue() time.Duration {
	return durationSetting(s.retryAfterMax, EnvRetryAfterMax, DefaultRetryAfterMax)
}

// backoff is the bounded exponential backoff of every retry.
func (s *Session) backoff() remote.Backoff {
	base := durationSetting(s.retryBase, EnvRetryBase, DefaultRetryBase)
	return remote.Backoff{Duration: base, Factor: 2, Jitter: 0.1, Steps: retrySteps, Cap: 25 * base}
}

// newRetry is the one retry policy of every request: go-containerregistry's
// retrying transport with imgctl's backoff, predicate and status codes
// (Retry-After is honoured below it, in guardTransport).
func newRetry(rt http.RoundTripper, b remote.Backoff) http.RoundTripper {
	return gtransport.NewRetry(rt, gtransport.WithRetryBackoff(b),
		gtransport.WithRetryPredicate(retryable), gtransport.WithRetryStatusCodes(retryStatusCodes...))
}

// temporary is the interface of errors that say they are worth a retry.
type temporary interface{ Temporary() bool }

// retryable reports whether a failed request is worth another attempt:
// the errors go-containerregistry retries by default, plus content that did
// not match its digest.
func retryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var t temporary
	if errors.As(err, &t) && t.Temporary() {
		return true
	}
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, net.ErrClosed) ||
		// net/http re-sends a request on a pooled connection the server
		// closed only when it can tell the request is idempotent; a PUT
		// gets this error (net/http's errServerClosedIdle is unexported,
		// hence the text), as behind a load balancer that drops idle
		// connections.
		strings.Contains(err.Error(), "http: server closed idle connection")
}

// retryAfter returns the wait a 429 or 503 response asks for, capped at
// limit, and false when it asks for none.
func retryAfter(resp *http.Response, limit time.Duration) (time.Duration, bool) {
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable {
		return 0, false
	}
	h := resp.Header.Get("Retry-After")
	if h == "" {
		return 0, false
	}
	var d time.Duration
	if secs, err := strconv.ParseInt(h, 10, 64); err == nil {
		d = limit
		if secs < int64(limit/time.Second)+1 {
			d = time.Duration(secs) * time.Second
		}
	} else if t, err := http.ParseTime(h); err == nil {
		d = time.Until(t)
	} else {
		return 0, false
	}
	return min(max(d, 0), limit), true
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
