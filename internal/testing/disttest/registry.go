package disttest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/imgctl/imgctl/internal/testing/buildtest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// Options configure Start.
type Options struct {
	// Binary is the registry to run; empty means BinaryPath().
	Binary string
	// User is the htpasswd user; empty means "imgctl". The password is
	// random, see Registry.Password.
	User string
	// BcryptCost is the cost of the htpasswd hash, which the registry
	// checks on every request; zero means bcrypt.MinCost, so that a test
	// of a few hundred requests stays fast.
	BcryptCost int
	// StartTimeout bounds the wait for the registry to answer; zero means
	// 30 seconds.
	StartTimeout time.Duration
	// Token makes the proxy, not distribution, ask for a bearer token: it
	// answers every request without its token with 401 and
	// `WWW-Authenticate: Bearer realm="http://HOST/token",...`
	// (regtest.BearerAuth), serves that token endpoint, which hands the
	// token only to requests with the htpasswd user's basic credentials
	// (the ones New writes into DOCKER_CONFIG), and forwards every request
	// that carries the token to distribution with those basic credentials
	// instead. It is not distribution's own token auth (that needs a JWT
	// token server): tokens carry no scopes and any token grants the
	// user's full access, but clients make the same handshake. Middleware
	// set with SetMiddleware runs before the token check and sees the
	// challenges and token requests.
	Token bool
}

// Registry is a running distribution registry behind a recording reverse
// proxy on 127.0.0.1.
type Registry struct {
	bin, root, cfg string
	user, password string
	secret         string // distribution's http.secret, kept across restarts
	addr           string // the proxy's 127.0.0.1:PORT, kept across Restart
	timeout        time.Duration
	upstream       *http.Transport
	log            requestLog
	bearer         *regtest.BearerAuth // with Options.Token

	mu      sync.Mutex
	mw      func(http.Handler) http.Handler
	srv     *http.Server
	proc    *process
	stopped bool
	closed  bool
}

// process is one run of the registry binary.
type process struct {
	cmd    *exec.Cmd
	exited chan struct{}
	err    error
}

// Start starts a registry with a fresh storage directory. Call Close when
// done.
func Start(opts Options) (*Registry, error) {
	bin := opts.Binary
	if bin == "" {
		var err error
		if bin, err = BinaryPath(); err != nil {
			return nil, err
		}
	} else if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoRegistry, err)
	}
	// Not t.TempDir(): a unix socket path must stay under 108 bytes.
	root, err := os.MkdirTemp("", "disttest-")
	if err != nil {
		return nil, fmt.Errorf("creating the registry root: %w", err)
	}
	r := &Registry{bin: bin, root: root, cfg: filepath.Join(root, "config.yml"), user: opts.User,
		password: randomHex(16), timeout: opts.StartTimeout}
	if r.user == "" {
		r.user = "imgctl"
	}
	if opts.Token {
		r.bearer = &regtest.BearerAuth{Token: randomHex(16), User: r.user, Password: r.password, Service: "disttest"}
	}
	if r.timeout == 0 {
		r.timeout = 30 * time.Second
	}
	sock := filepath.Join(root, "registry.sock")
	r.upstream = &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
		MaxIdleConnsPerHost: 16,
	}
	if err := r.setup(opts.BcryptCost); err != nil {
		_ = os.RemoveAll(root)
		return nil, err
	}
	if err := r.start(); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// New starts a registry for the test, writes its credentials into a
// temporary DOCKER_CONFIG (see Login) and closes it when the test ends,
// logging the tail of its log if the test failed. It fails the test when
// the registry binary is missing or does not start, and skips it under
// -short (buildtest.SkipShort).
func New(t testing.TB, opts Options) *Registry {
	t.Helper()
	buildtest.SkipShort(t, Needs)
	r, err := Start(opts)
	if err != nil {
		t.Fatalf("starting the distribution registry: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(r.LogTail(10))
		}
		r.Close()
	})
	r.Login(t)
	return r
}

func (r *Registry) setup(cost int) error {
	if cost == 0 {
		cost = bcrypt.MinCost
	}
	line, err := htpasswd(r.user, r.password, cost)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(r.root, "htpasswd"), line, 0o600); err != nil {
		return fmt.Errorf("writing htpasswd: %w", err)
	}
	r.secret = randomHex(16)
	return r.writeConfig(false)
}

func (r *Registry) writeConfig(readOnly bool) error {
	if err := os.WriteFile(r.cfg, []byte(configYAML(r.root, r.secret, readOnly)), 0o600); err != nil {
		return fmt.Errorf("writing the registry config: %w", err)
	}
	return nil
}

// RestartReadOnly stops the registry and starts it again on the same port
// and storage with distribution's own read-only maintenance mode on or
// off: read-only, it serves reads and refuses every upload and manifest
// PUT (405 UNSUPPORTED), as a mirror or a repository without push rights
// refuses them.
func (r *Registry) RestartReadOnly(readOnly bool) error {
	if err := r.Stop(); err != nil {
		return err
	}
	if err := r.writeConfig(readOnly); err != nil {
		return err
	}
	return r.Restart()
}

// start runs the registry process, waits until it answers, and opens the
// proxy's port (a new ephemeral one the first time, the same one after).
func (r *Registry) start() error {
	_ = os.Remove(filepath.Join(r.root, "registry.sock"))
	logf, err := os.OpenFile(r.logFile(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("creating the registry log: %w", err)
	}
	defer logf.Close() // the child keeps its own descriptor
	cmd := exec.Command(r.bin, "serve", r.cfg)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), "OTEL_TRACES_EXPORTER=none", "OTEL_METRICS_EXPORTER=none", "OTEL_LOGS_EXPORTER=none")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", r.bin, err)
	}
	p := &process{cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	r.mu.Lock()
	r.proc = p
	r.mu.Unlock()
	if err := r.waitReady(p); err != nil {
		return fmt.Errorf("%w\n%s", err, r.LogTail(20))
	}
	addr := r.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	proxy := &httputil.ReverseProxy{
		Director: func(req *http.Request) {
			// The Host header stays the client's, so that the
			// registry's Location headers name the proxy.
			req.URL.Scheme, req.URL.Host = "http", "registry"
		},
		Transport: r.upstream,
		// A registry that went away mid-request breaks the connection;
		// it does not answer 502.
		ErrorHandler: func(http.ResponseWriter, *http.Request, error) { panic(http.ErrAbortHandler) },
		ErrorLog:     log.New(io.Discard, "", 0),
	}
	srv := &http.Server{
		Handler:           r.log.middleware(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { r.serve(proxy, w, req) })),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	r.mu.Lock()
	r.addr, r.srv, r.stopped = ln.Addr().String(), srv, false
	r.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
	return nil
}

// waitReady polls /v2/ through the socket until the registry answers.
func (r *Registry) waitReady(p *process) error {
	deadline := time.Now().Add(r.timeout)
	c := &http.Client{Transport: r.upstream, Timeout: 2 * time.Second}
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-p.exited:
			return fmt.Errorf("the registry exited before it was ready: %v", p.err)
		case <-time.After(20 * time.Millisecond):
		}
		resp, err := c.Get("http://registry/v2/")
		if err != nil {
			last = err
			continue
		}
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusOK {
			return nil
		}
		last = fmt.Errorf("GET /v2/: %s", resp.Status)
	}
	return fmt.Errorf("the registry is not ready after %s (last: %v)", r.timeout, last)
}

func (r *Registry) serve(proxy http.Handler, w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	mw := r.mw
	r.mu.Unlock()
	if r.bearer != nil {
		proxy = r.tokenAuth(proxy)
	}
	if mw != nil {
		proxy = mw(proxy)
	}
	proxy.ServeHTTP(w, req)
}

// SetMiddleware wraps the proxy for requests that arrive afterwards, for
// example with a regtest.Faults middleware; nil removes it. Requests are
// recorded before the middleware sees them.
func (r *Registry) SetMiddleware(mw func(http.Handler) http.Handler) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mw = mw
}

// StopOn installs a middleware that stops the registry (see Stop) when the
// first request for which match is true arrives, before the registry sees
// it: the client's connection breaks and later requests are refused. The
// returned function reports whether it fired.
func (r *Registry) StopOn(match func(*http.Request) bool) (fired func() bool) {
	var once sync.Once
	var mu sync.Mutex
	done := false
	r.SetMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if !match(req) {
				next.ServeHTTP(w, req)
				return
			}
			once.Do(func() {
				mu.Lock()
				done = true
				mu.Unlock()
				_ = r.Stop()
			})
			panic(http.ErrAbortHandler)
		})
	})
	return func() bool {
		mu.Lock()
		defer mu.Unlock()
		return done
	}
}

// Stop takes the registry down as a crash or an operator would: it closes
// the port and every open connection, so that requests in flight break and
// new ones are refused, then stops the process (SIGTERM, SIGKILL after 10s).
// The storage stays for Restart. Stopping a stopped registry does nothing.
func (r *Registry) Stop() error {
	r.mu.Lock()
	if r.stopped || r.srv == nil {
		r.mu.Unlock()
		return nil
	}
	r.stopped = true
	srv, p := r.srv, r.proc
	r.mu.Unlock()
	_ = srv.Close()
	r.upstream.CloseIdleConnections()
	return p.stop()
}

func (p *process) stop() error {
	regtest.StopGroup(p.cmd.Process.Pid, p.exited, 10*time.Second)
	var ee *exec.ExitError
	if p.err != nil && !errors.As(p.err, &ee) {
		return fmt.Errorf("stopping the registry: %w", p.err)
	}
	return nil
}

// Restart starts a stopped registry again on the same port and storage.
func (r *Registry) Restart() error {
	r.mu.Lock()
	stopped, closed, p := r.stopped, r.closed, r.proc
	r.mu.Unlock()
	if closed || !stopped {
		return fmt.Errorf("restarting the registry: it is %s", map[bool]string{true: "closed", false: "running"}[closed])
	}
	<-p.exited // a Stop from a request handler may still be waiting for it
	return r.start()
}

// Close stops the registry and removes its storage. It is safe to call
// more than once.
func (r *Registry) Close() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.closed = true
	p := r.proc
	r.mu.Unlock()
	if p != nil {
		_ = r.Stop()
		<-p.exited // a Stop from a request handler may still be waiting for it
	}
	_ = os.RemoveAll(r.root)
}

// Host returns the registry address clients use, "127.0.0.1:PORT".
func (r *Registry) Host() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.addr
}

// User returns the htpasswd user.
func (r *Registry) User() string { return r.user }

// Password returns the user's random password: tests check that no output
// of imgctl contains it.
func (r *Registry) Password() string { return r.password }

// Root returns the registry's directory (config, htpasswd, data, log).
func (r *Registry) Root() string { return r.root }

func (r *Registry) logFile() string { return filepath.Join(r.root, "registry.log") }

// LogTail returns the last n lines of the registry's log, leaving out the
// 404s it logs as errors (every HEAD of a blob or tag that is not there yet).
func (r *Registry) LogTail(n int) string {
	dt, err := os.ReadFile(r.logFile())
	if err != nil {
		return "(no registry log: " + err.Error() + ")"
	}
	var lines []string
	for l := range strings.SplitSeq(strings.TrimRight(string(dt), "\n"), "\n") {
		if !strings.Contains(l, "http.response.status=404 ") {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "distribution registry log (" + r.logFile() + "):\n" + strings.Join(lines, "\n")
}
