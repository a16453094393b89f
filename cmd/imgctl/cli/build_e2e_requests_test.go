package cli

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// requestLog records "METHOD PATH" of every request the registry serves
// while it is installed.
type requestLog struct {
	mu   sync.Mutex
	reqs []string
}

func (l *requestLog) install(r *regtest.Registry) func() {
	r.SetMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			l.mu.Lock()
			l.reqs = append(l.reqs, req.Method+" "+req.URL.Path)
			l.mu.Unlock()
			next.ServeHTTP(w, req)
		})
	})
	return func() { r.SetMiddleware(nil) }
}

// count returns how many requests equal req ("METHOD PATH"), or, unless
// exact, start with it.
func (l *requestLog) count(req string, exact bool) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.reqs {
		if r == req || (!exact && strings.HasPrefix(r, req)) {
			n++
		}
	}
	return n
}

func (l *requestLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.reqs, "\n")
}

// repoPath is the /v2/ path of a reference's repository, e.g.
// /v2/distroless/static.
func repoPath(ref string) string {
	_, rest, _ := strings.Cut(ref, "/")
	repo, _, _ := strings.Cut(rest, ":")
	return "/v2/" + repo
}

// linuxTaggedByBuildKit: a Linux-only build of several platforms is one
// solve whose index BuildKit pushes to the tag itself, with the index
// annotations and the base annotations. imgctl's own requests on a warm
// cache are one handshake and the tag check; it reads no base. The daemon
// resolves the base tag once (one HEAD, for linux/amd64; linux/arm64 goes
// by the digest that returned) and the frontend does not resolve the
// pinned base again.
func (e *e2e) linuxTaggedByBuildKit(t *testing.T) {
	tag := e.reg.Host() + "/hello:linux"
	var log requestLog
	uninstall := log.install(e.reg)
	out, stderr, code := run(t, "build", "--builder", e.daemon.Addr, "--progress", "quiet", "--no-verify",
		"--platform", "linux/amd64,linux/arm64", "-t", tag, "--annotation", "org.opencontainers.image.version=e2e",
		"--build-arg", "GOLANG_IMAGE="+e.bases.Golang, "--build-arg", "LINUX_BASE="+e.bases.Distroless,
		"--build-arg", "VERSION=e2e", e.hello)
	uninstall()
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, tail(stderr, 40))
	}
	ii, im := e.indexAt(t, tag)
	var plats []string
	for _, d := range im.Manifests {
		if d.Platform != nil && d.Platform.OS != "unknown" {
			plats = append(plats, d.Platform.String())
		}
	}
	slices.Sort(plats)
	if fmt.Sprint(plats) != "[linux/amd64 linux/arm64]" {
		t.Errorf("platforms %v", plats)
	}
	e.checkBaseAnnotations(t, tag, map[string]string{"linux/amd64": e.bases.Distroless, "linux/arm64": e.bases.Distroless})
	// BuildKit tagged the index itself, with the default provenance of
	// each image attached to it.
	atts := e.attestationsAt(t, tag)
	for _, a := range atts {
		e.provenance(t, a, e.bases.Distroless)
	}
	if len(atts) != 2 {
		t.Errorf("%d images, want 2", len(atts))
	}
	if im.Annotations["org.opencontainers.image.version"] != "e2e" {
		t.Errorf("index annotations %v", im.Annotations)
	}
	if d, err := ii.Digest(); err != nil || !strings.Contains(out, d.String()) {
		t.Errorf("stdout does not name the index %s (%v):\n%s", d, err, out)
	}
	base, hello := repoPath(e.bases.Distroless), repoPath(tag)
	checkRequests(t, &log, []requestCount{
		{"GET /v2/", 1, true},
		{"GET " + base + "/manifests/", 0, false},
		{"HEAD " + base + "/manifests/nonroot", 1, true},
		{"HEAD " + base + "/", 1, false}, // nothing by digest: the daemon finds the pinned digests in its cache
		{"GET " + hello + "/", 0, false},
		{"PUT " + hello + "/manifests/linux", 1, false},
	})
}

// requestCount expects want requests equal to (exact) or starting with
// "METHOD PATH".
type requestCount struct {
	req   string
	want  int
	exact bool
}

func checkRequests(t *testing.T, l *requestLog, cs []requestCount) {
	t.Helper()
	for _, c := range cs {
		got := l.count(c.req, c.exact)
		if got != c.want {
			t.Errorf("%q: %d requests, want %d; all requests:\n%s", c.req, got, c.want, l.String())
		}
	}
}
