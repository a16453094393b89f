package disttest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// TestToken: with Options.Token the proxy challenges for a bearer token,
// hands it out only for the htpasswd credentials, and a client that did the
// handshake reads and writes the distribution registry underneath.
func TestToken(t *testing.T) {
	r := New(t, Options{Token: true})
	resp, err := http.Get("http://" + r.Host() + "/v2/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	challenge := resp.Header.Get("WWW-Authenticate")
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(challenge, `Bearer realm="http://`+r.Host()+regtest.TokenPath+`"`) {
		t.Fatalf("anonymous GET /v2/: %s, challenge %q; want 401 with a Bearer challenge on the proxy", resp.Status, challenge)
	}
	req, err := http.NewRequest(http.MethodGet, "http://"+r.Host()+"/v2/", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(r.User(), r.Password())
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /v2/ with basic credentials instead of a token: %s, want 401", resp.Status)
	}

	img := regtest.Must(regtest.LinuxImage("amd64"))(t)
	ref, d, err := r.PushTag("a/app:1", img)
	if err != nil {
		t.Fatal(err)
	}
	if n := r.TokenRequests(); n < 1 {
		t.Errorf("the push made %d token requests, want at least 1", n)
	}
	if desc, err := r.Head(ref); err != nil || desc.Digest != d {
		t.Fatalf("HEAD a/app:1 with a token: %v %v, want %s", desc, err, d)
	}
	if n := r.Count(http.MethodGet, regtest.TokenPath); n != int(r.TokenRequests()) {
		t.Errorf("recorded %d token requests, the endpoint served %d", n, r.TokenRequests())
	}
	if _, err := remote.Head(ref, remote.WithAuth(&authn.Basic{Username: r.User(), Password: "wrong"})); !hasStatus(err, http.StatusUnauthorized) {
		t.Errorf("HEAD with a wrong password at the token endpoint: %v, want 401", err)
	}
}
