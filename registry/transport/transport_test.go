package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

func TestTLSVerificationOnUnlessInsecure(t *testing.T) {
	for _, insecure := range []bool{false, true} {
		c := New(Options{Insecure: insecure})
		c.RoundTripper()
		g := c.rt.(*guardTransport)
		ht := g.next.(*http.Transport)
		skip := ht.TLSClientConfig != nil && ht.TLSClientConfig.InsecureSkipVerify
		if skip != insecure {
			t.Errorf("Insecure=%t: InsecureSkipVerify=%t", insecure, skip)
		}
	}
	// A self-signed registry is refused without --insecure.
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v2/", nil)
	_, err := New(Options{}).RoundTripper().RoundTrip(req)
	var cerr *tls.CertificateVerificationError
	if !errors.As(err, &cerr) {
		t.Errorf("self-signed certificate: %v", err)
	}
}

func TestPlainHTTPOnlyOnLoopback(t *testing.T) {
	for host, refused := range map[string]bool{
		"registry.example.com": true, "10.0.0.1:5000": true, "192.168.1.2": true,
		"127.0.0.1:1": false, "localhost:1": false, "[::1]:1": false,
	} {
		req, _ := http.NewRequest(http.MethodGet, "http://"+host+"/v2/", nil)
		c := New(Options{})
		c.RoundTripper()
		_, err := c.rt.RoundTrip(req)
		if got := errors.Is(err, ErrPlainHTTP); got != refused {
			t.Errorf("%s: refused=%t (%v)", host, got, err)
		}
		if refused {
			ci := New(Options{Insecure: true})
			ci.RoundTripper()
			if _, err := ci.rt.RoundTrip(req); errors.Is(err, ErrPlainHTTP) {
				t.Errorf("%s with --insecure: %v", host, err)
			}
		}
	}
}

// TestRetryAfter: a 429 waits what Retry-After asks, within the cap.
func TestRetryAfter(t *testing.T) {
	reg := regtest.New(t)
	// Repository x exists, so that its missing tag is the registry's
	// MANIFEST_UNKNOWN (a NAME_UNKNOWN 404 is not absent: see notFound).
	regtest.MustPush(t, reg.MustRef(t, "x:1"), regtest.Must(regtest.LinuxImage("amd64"))(t))
	for _, tc := range []struct {
		retryAfter string
		cap        time.Duration
		min, max   time.Duration
	}{
		{"1", 0, 900 * time.Millisecond, 5 * time.Second},
		{"3600", 100 * time.Millisecond, 100 * time.Millisecond, 5 * time.Second},
	} {
		f := regtest.NewFaults(regtest.Fault{Kind: regtest.Fault429, RetryAfter: tc.retryAfter, Route: regtest.RouteManifest, First: 1})
		reg.SetMiddleware(f.Middleware)
		o := New(Options{RetryAfterMax: tc.cap})
		req, _ := http.NewRequest(http.MethodGet, reg.URL()+"/v2/x/manifests/missing", nil)
		start := time.Now()
		resp, err := o.RoundTripper().RoundTrip(req)
		d := time.Since(start)
		if err != nil || resp.StatusCode != http.StatusNotFound || f.Injected() != 1 {
			t.Fatalf("Retry-After %s: %v %v", tc.retryAfter, resp, err)
		}
		resp.Body.Close()
		if d < tc.min || d > tc.max {
			t.Errorf("Retry-After %s (cap %s): waited %s", tc.retryAfter, tc.cap, d)
		}
	}
	if New(Options{}).retryAfterMaxValue() != DefaultRetryAfterMax || New(Options{}).backoff().Duration != DefaultRetryBase {
		t.Error("production defaults changed")
	}
	t.Setenv(EnvRetryBase, "3ms")
	if b := New(Options{}).backoff(); b.Duration != 3*time.Millisecond || b.Steps != retrySteps {
		t.Errorf("env backoff %+v", b)
	}
}

// TestManifestTooLarge: a manifest over 4 MiB is refused, not retried.
func TestManifestTooLarge(t *testing.T) {
	big := strings.Repeat(" ", MaxManifestSize+1)
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n++
		if strings.HasSuffix(r.URL.Path, "/latest") {
			w.Header().Set("Content-Length", strconv.Itoa(len(big)))
		}
		_, _ = io.WriteString(w, big)
	}))
	defer srv.Close()
	// With a Content-Length, then chunked.
	for _, chunked := range []bool{false, true} {
		n = 0
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v2/a/manifests/latest", nil)
		if chunked {
			req.URL.Path = "/v2/a/manifests/other"
		}
		_, err := New(Options{}).RoundTripper().RoundTrip(req)
		if !errors.Is(err, ErrManifestTooLarge) || n != 1 {
			t.Errorf("err %v after %d requests", err, n)
		}
	}
}

// TestDigestMismatchRetried: content that does not match its digest is
// retried, and a persistent mismatch is an error naming it, whether the
// digest is in the path or, for a tag, in Docker-Content-Digest.
func TestDigestMismatchRetried(t *testing.T) {
	t.Setenv(EnvRetryBase, "1ms")
	reg := regtest.New(t)
	ref := reg.MustRef(t, "app:1")
	d := regtest.MustPush(t, ref, regtest.Must(regtest.LinuxImage("amd64"))(t))
	get := func(s *Session, reference string) (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodGet, reg.URL()+"/v2/app/manifests/"+reference, nil)
		return s.RoundTripper().RoundTrip(req)
	}
	f := regtest.NewFaults(regtest.Fault{Kind: regtest.FaultCorrupt, Route: regtest.RouteManifest, First: 2})
	reg.SetMiddleware(f.Middleware)
	resp, err := get(New(Options{}), d.String())
	if err != nil || resp.StatusCode != http.StatusOK || f.Injected() != 2 {
		t.Fatalf("transient: %v %v (%d faults)", resp, err, f.Injected())
	}
	resp.Body.Close()
	reg.SetMiddleware(regtest.NewFaults(regtest.Fault{Kind: regtest.FaultCorrupt, Route: regtest.RouteManifest}).Middleware)
	_, err = get(New(Options{}), "1")
	var dm *DigestMismatchError
	if !errors.As(err, &dm) || dm.Want != d.String() {
		t.Errorf("persistent: %v", err)
	}
}

func TestRetryable(t *testing.T) {
	for err, want := range map[error]bool{
		io.ErrUnexpectedEOF: true, &DigestMismatchError{}: true, context.Canceled: false,
		ErrManifestTooLarge: false, ErrPlainHTTP: false, nil: false,
		fmt.Errorf("Put %q: %w", "http://r/v2/a/manifests/1", errors.New("http: server closed idle connection")): true,
	} {
		if got := retryable(err); got != want {
			t.Errorf("%v: %t", err, got)
		}
	}
}
