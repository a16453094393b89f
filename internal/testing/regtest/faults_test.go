package regtest

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestFaultKinds fetches one blob through each fault with a plain client
// and checks what it sees.
func TestFaultKinds(t *testing.T) {
	img := Must(LinuxImage("amd64"))(t)
	cfg := Must(img.ConfigName())(t).String()
	want := Must(img.RawConfigFile())(t)
	for _, tc := range []struct {
		kind     FaultKind
		status   int
		wantBody bool // a full body matching want
	}{
		{Fault500, 500, false}, {Fault502, 502, false}, {Fault503, 503, false}, {Fault429, 429, false},
		{FaultReset, 0, false}, {FaultTruncate, 0, false}, {FaultCorrupt, 200, false}, {FaultSlow, 200, true},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			reg := New(t)
			MustPush(t, reg.MustRef(t, "app:1"), img)
			f := NewFaults(Fault{Kind: tc.kind, Route: RouteBlob, Method: http.MethodGet, First: 1, RetryAfter: "7"})
			reg.SetMiddleware(f.Middleware)
			url := reg.URL() + "/v2/app/blobs/" + cfg
			start := time.Now()
			resp, err := http.Get(url)
			var body []byte
			if err == nil {
				body, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			switch {
			case tc.status == 0 && err == nil:
				t.Fatalf("%s: want a transport error, got %d", tc.kind, resp.StatusCode)
			case tc.status != 0 && (err != nil || resp.StatusCode != tc.status):
				t.Fatalf("%s: want %d, got %v %v", tc.kind, tc.status, resp, err)
			case tc.wantBody != bytes.Equal(body, want):
				t.Fatalf("%s: body equal = %t", tc.kind, !tc.wantBody)
			}
			if tc.kind == Fault429 && resp.Header.Get("Retry-After") != "7" {
				t.Errorf("Retry-After %q", resp.Header.Get("Retry-After"))
			}
			if tc.kind == FaultSlow && time.Since(start) < 50*time.Millisecond {
				t.Errorf("slow fault took %s", time.Since(start))
			}
			if f.Injected() != 1 || f.InjectedKind(tc.kind) != 1 {
				t.Errorf("injected %d", f.Injected())
			}
			// First: 1, so the second request is healthy.
			resp, err = http.Get(url)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if b, _ := io.ReadAll(resp.Body); !bytes.Equal(b, want) {
				t.Errorf("second request not healthy: %d", resp.StatusCode)
			}
		})
	}
}

func TestFaultSelection(t *testing.T) {
	f := Fault{Route: RouteManifestByDigest, Method: http.MethodGet, Every: 2}
	get := func(p string) *http.Request { r, _ := http.NewRequest(http.MethodGet, "http://x"+p, nil); return r }
	for p, want := range map[string]bool{
		"/v2/a/b/manifests/sha256:00": true, "/v2/a/manifests/latest": false,
		"/v2/a/blobs/sha256:00": false, "/v2/": false,
	} {
		if got := f.matches(get(p)); got != want {
			t.Errorf("%s: matches = %t", p, got)
		}
	}
	if f.due(1) || !f.due(2) || f.due(3) || !f.due(4) {
		t.Error("Every: 2 is not every other request")
	}
	if g := (Fault{First: 2}); !g.due(1) || !g.due(2) || g.due(3) {
		t.Error("First: 2")
	}
}

func TestBearerAuth(t *testing.T) {
	b := &BearerAuth{Token: "tok-123", User: "u", Password: "p", Service: "regtest"}
	reg := New(t, WithMiddleware(b.Middleware))
	do := func(path, auth string, basic bool) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, reg.URL()+path, nil)
		if basic {
			req.SetBasicAuth("u", "p")
		} else if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if r := do("/v2/", "", false); r.StatusCode != 401 || !strings.Contains(r.Header.Get("WWW-Authenticate"), `realm="`+reg.URL()+TokenPath) {
		t.Errorf("challenge: %d %q", r.StatusCode, r.Header.Get("WWW-Authenticate"))
	}
	if r := do(TokenPath, "", false); r.StatusCode != 401 {
		t.Errorf("token without credentials: %d", r.StatusCode)
	}
	if r := do(TokenPath, "", true); r.StatusCode != 200 || b.TokenRequests() != 2 {
		t.Errorf("token with credentials: %d", r.StatusCode)
	}
	if r := do("/v2/", "Bearer tok-123", false); r.StatusCode != 200 {
		t.Errorf("with the token: %d", r.StatusCode)
	}
}
