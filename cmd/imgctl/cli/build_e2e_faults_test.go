package cli

import (
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/internal/regtest"
)

// buildFaults: imgctl build's own registry requests survive transient
// faults (a 503 on the tag check, a 429 and a 503 on the index PUT), and a
// PUT that keeps failing ends the build with exit 2 and no tag, although
// every variant was pushed by digest.
func (e *e2e) buildFaults(t *testing.T) {
	relFastRetries(t)
	defer e.reg.SetMiddleware(nil)
	build := func(tag string) (string, string, int) {
		return run(t, append([]string{"build", "--builder", e.daemon.Addr, "--progress", "quiet", "--no-verify",
			"-t", e.reg.Host() + "/hello:" + tag, "--build-arg", "VERSION=e2e"}, append(e.baseArgs, e.hello)...)...)
	}

	transient := regtest.NewFaults(
		regtest.Fault{Kind: regtest.Fault503, Route: regtest.RouteManifestByTag, Method: "HEAD", Repo: "hello", First: 1},
		regtest.Fault{Kind: regtest.Fault429, Route: regtest.RouteManifestByTag, Method: "PUT", Repo: "hello", RetryAfter: "0", First: 1},
		regtest.Fault{Kind: regtest.Fault503, Route: regtest.RouteManifestByTag, Method: "PUT", Repo: "hello", First: 1},
	)
	e.reg.SetMiddleware(transient.Middleware)
	out, stderr, code := build("transient")
	e.reg.SetMiddleware(nil)
	if code != 0 || transient.Injected() != 3 {
		t.Fatalf("transient faults: exit %d, %d faults injected (want 3)\nstdout:\n%s\nstderr:\n%s", code, transient.Injected(), out, tail(stderr, 20))
	}
	if _, im := e.indexAt(t, e.reg.Host()+"/hello:transient"); len(im.Manifests) != 4 {
		t.Errorf("transient faults: index has %d entries, want 4", len(im.Manifests))
	}

	persistent := regtest.NewFaults(regtest.Fault{Kind: regtest.Fault500, Route: regtest.RouteManifestByTag, Method: "PUT", Repo: "hello"})
	e.reg.SetMiddleware(persistent.Middleware)
	_, stderr, code = build("persistent")
	e.reg.SetMiddleware(nil)
	if code != ExitError || !strings.Contains(stderr, "merging into "+e.reg.Host()+"/hello:persistent") {
		t.Errorf("persistent fault: exit %d, stderr:\n%s", code, tail(stderr, 20))
	}
	if _, err := remote.Head(e.ref(t, e.reg.Host()+"/hello:persistent")); !relNotFound(err) {
		t.Errorf("persistent fault: the tag exists or HEAD failed otherwise: %v", err)
	}
}
