package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func newTestServer() *server {
	return &server{log: slog.New(slog.NewJSONHandler(io.Discard, nil))}
}

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code, rec.Body.String()
}

func TestEndpoints(t *testing.T) {
	s := newTestServer()
	h := s.routes()
	for _, tc := range []struct {
		path string
		code int
		body string
	}{
		{"/", http.StatusOK, "version " + version},
		{"/healthz", http.StatusOK, "ok"},
		{"/readyz", http.StatusOK, "ready"},
		{"/nope", http.StatusNotFound, ""},
	} {
		code, body := get(t, h, tc.path)
		if code != tc.code || !strings.Contains(body, tc.body) {
			t.Errorf("GET %s = %d %q, want %d containing %q", tc.path, code, body, tc.code, tc.body)
		}
	}
}

func TestReadyzFlipsOnShutdown(t *testing.T) {
	s := newTestServer()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// A slow request keeps the server draining while we probe the handlers.
	started, release := make(chan struct{}), make(chan struct{})
	mux := http.NewServeMux()
	mux.Handle("/", s.routes())
	mux.HandleFunc("/slow", func(http.ResponseWriter, *http.Request) {
		close(started)
		<-release
	})
	srv := &http.Server{Handler: mux}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.serve(ctx, srv, l) }()

	base := "http://" + l.Addr().String()
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("readyz before shutdown = %d, want 200", resp.StatusCode)
	}
	slow := make(chan struct{})
	go func() {
		defer close(slow)
		if resp, err := http.Get(base + "/slow"); err == nil {
			resp.Body.Close()
		}
	}()
	<-started
	cancel()
	waitFor(t, s.draining.Load)

	h := s.routes()
	if code, _ := get(t, h, "/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("readyz after shutdown began = %d, want 503", code)
	}
	if code, _ := get(t, h, "/healthz"); code != http.StatusOK {
		t.Errorf("healthz after shutdown began = %d, want 200", code)
	}
	close(release)
	<-slow
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("server did not shut down")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in time")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
