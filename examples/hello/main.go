// Command hello is the example service that imgctl builds for Linux and Windows.
//
// It serves a greeting on /, liveness on /healthz and readiness on /readyz.
// On SIGTERM or SIGINT it reports not ready, drains connections and exits.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// shutdownTimeout bounds how long in-flight requests may take after a signal.
const shutdownTimeout = 10 * time.Second

// server holds the HTTP handlers and the readiness state.
type server struct {
	log      *slog.Logger
	draining atomic.Bool
}

// routes returns the handler for all endpoints.
func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.hello)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", s.ready)
	return mux
}

func (s *server) hello(w http.ResponseWriter, r *http.Request) {
	s.log.Info("request", "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr)
	fmt.Fprintf(w, "hello from %s/%s, version %s\n", runtime.GOOS, runtime.GOARCH, version)
}

func (s *server) ready(w http.ResponseWriter, _ *http.Request) {
	if s.draining.Load() {
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
		return
	}
	fmt.Fprintln(w, "ready")
}

// serve runs srv on l until ctx is done, then marks the server not ready and
// shuts down gracefully.
func (s *server) serve(ctx context.Context, srv *http.Server, l net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.draining.Store(true)
	s.log.Info("shutting down", "timeout", shutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func run(ctx context.Context, log *slog.Logger) error {
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	l, err := net.Listen("tcp", ":"+port)
	if err != nil {
		return err
	}
	s := &server{log: log}
	srv := &http.Server{Handler: s.routes(), ReadHeaderTimeout: 5 * time.Second}
	log.Info("listening", "addr", l.Addr().String(), "version", version, "os", runtime.GOOS, "arch", runtime.GOARCH)
	return s.serve(ctx, srv, l)
}

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, log); err != nil {
		log.Error("exiting", "err", err.Error())
		os.Exit(1)
	}
	log.Info("stopped")
}
