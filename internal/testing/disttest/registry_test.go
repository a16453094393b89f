package disttest

import (
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// TestRegistry checks that the harness runs the real thing: basic auth on
// every request, blobs linked per repository, no referrers API, and a
// Stop that refuses connections until Restart brings the same storage
// back on the same port.
func TestRegistry(t *testing.T) {
	r := New(t, Options{})
	host := r.Host()
	if !strings.HasPrefix(host, "127.0.0.1:") {
		t.Fatalf("host %q is not on 127.0.0.1", host)
	}

	resp, err := http.Get("http://" + host + "/v2/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic ") {
		t.Fatalf("anonymous GET /v2/: %s, challenge %q; want 401 with a Basic challenge", resp.Status, resp.Header.Get("WWW-Authenticate"))
	}

	img := regtest.Must(regtest.LinuxImage("amd64"))(t)
	ref, d, err := r.PushTag("a/app:1", img)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := remote.Head(ref, remote.WithAuth(&authn.Basic{Username: r.User(), Password: "wrong"})); !hasStatus(err, http.StatusUnauthorized) {
		t.Errorf("HEAD with a wrong password: %v, want 401", err)
	}
	if desc, err := r.Head(ref); err != nil || desc.Digest != d {
		t.Fatalf("HEAD a/app:1: %v %v, want %s", desc, err, d)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	ld, err := layers[0].Digest()
	if err != nil {
		t.Fatal(err)
	}
	for repo, want := range map[string]int{"a/app": http.StatusOK, "b/app": http.StatusNotFound} {
		if got := r.status(t, http.MethodHead, "/v2/"+repo+"/blobs/"+ld.String()); got != want {
			t.Errorf("HEAD of a/app's layer in %s: %d, want %d (blobs are linked per repository)", repo, got, want)
		}
	}
	if got := r.status(t, http.MethodGet, "/v2/a/app/referrers/"+d.String()); got != http.StatusNotFound {
		t.Errorf("referrers API: %d, want 404", got)
	}

	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get("http://" + host + "/v2/"); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("GET after Stop: %v, want connection refused", err)
	}
	if err := r.Restart(); err != nil {
		t.Fatal(err)
	}
	if r.Host() != host {
		t.Errorf("restarted on %s, want %s", r.Host(), host)
	}
	if desc, err := r.Head(ref); err != nil || desc.Digest != d {
		t.Fatalf("HEAD a/app:1 after the restart: %v %v", desc, err)
	}
	if n := r.Count(http.MethodPut, "/v2/a/app/manifests/1"); n != 1 {
		t.Errorf("recorded %d manifest PUTs, want 1:\n%v", n, r.Requests())
	}
}

// TestStopOn: the matching request never reaches the registry, and the
// client sees a broken connection, not an HTTP error.
func TestStopOn(t *testing.T) {
	r := New(t, Options{})
	fired := r.StopOn(func(req *http.Request) bool { return req.Method == http.MethodPut })
	_, _, err := r.PushTag("a/app:1", regtest.Must(regtest.LinuxImage("arm64"))(t))
	if err == nil || !fired() {
		t.Fatalf("push with a stop at the first PUT: %v, fired %t", err, fired())
	}
	var terr *transport.Error
	if errors.As(err, &terr) {
		t.Errorf("the client got an HTTP answer: %v", err)
	}
	r.SetMiddleware(nil)
	if err := r.Restart(); err != nil {
		t.Fatal(err)
	}
	ref, err := r.Ref("a/app:1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Head(ref); !hasStatus(err, http.StatusNotFound) {
		t.Errorf("HEAD of the tag whose PUT was cut: %v, want 404", err)
	}
}

// TestMissingBinary fails with the reason and the way out.
func TestMissingBinary(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "registry")
	if _, err := Start(Options{Binary: missing}); !errors.Is(err, ErrNoRegistry) {
		t.Errorf("Start with a missing binary: %v, want ErrNoRegistry", err)
	}
	t.Setenv(EnvRegistry, missing)
	if _, err := BinaryPath(); !errors.Is(err, ErrNoRegistry) || !strings.Contains(err.Error(), "make registry") {
		t.Errorf("BinaryPath: %v, want ErrNoRegistry naming `make registry`", err)
	}
}

// status sends an authenticated request and returns the status.
func (r *Registry) status(t *testing.T, method, path string) int {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+r.Host()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(r.User(), r.Password())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func hasStatus(err error, code int) bool {
	var terr *transport.Error
	return errors.As(err, &terr) && terr.StatusCode == code
}

// TestRestartReadOnly: distribution's read-only mode serves what the
// registry holds and refuses every push, until it is turned off again.
func TestRestartReadOnly(t *testing.T) {
	r := New(t, Options{})
	img := regtest.Must(regtest.LinuxImage("amd64"))(t)
	ref, d, err := r.PushTag("a/app:1", img)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.RestartReadOnly(true); err != nil {
		t.Fatal(err)
	}
	if desc, err := r.Head(ref); err != nil || desc.Digest != d {
		t.Fatalf("HEAD in read-only mode: %v %v, want %s", desc, err, d)
	}
	other := regtest.Must(regtest.LinuxImage("arm64"))(t)
	if _, _, err := r.PushTag("a/app:2", other); err == nil {
		t.Fatal("a push in read-only mode succeeded")
	}
	if err := r.RestartReadOnly(false); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.PushTag("a/app:2", other); err != nil {
		t.Fatalf("a push after read-only mode: %v", err)
	}
}
