package registry

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

const proxyPage = `<html><head><title>404 Not Found</title></head><body><center><h1>404 Not Found</h1></center><hr><center>nginx</center></body></html>`

// TestWhatCountsAsAbsent: a registry's 404 for a tag is absent (Head
// returns nil, IsNotFound is true), whether it is a HEAD without a body or
// a GET naming MANIFEST_UNKNOWN or Harbor's NOT_FOUND; a 404 that is not a
// registry's answer (an HTML page from a proxy, a router's plain text) or
// that names something else (NAME_UNKNOWN) is ErrUnexpectedNotFound, a
// registry error, never absent.
func TestWhatCountsAsAbsent(t *testing.T) {
	ctx := context.Background()
	reg := regtest.New(t)
	repo := regtest.Must(reg.Repo("app"))(t)
	pushedIndex(t, repo, "absent")
	missing := repo.Tag("missing")
	for _, tc := range []struct {
		name        string
		method      string // faulted method; "" for the registry's own answer
		contentType string
		body        string
		absent      bool
	}{
		{"registry HEAD 404", "", "", "", true},
		{"registry HEAD 404, repository unknown", "", "", "", true},
		{"HEAD 404 with a JSON content type", http.MethodHead, "application/json", "", true},
		{"HTML HEAD 404 from a proxy", http.MethodHead, "text/html; charset=utf-8", proxyPage, false},
		{"GET 404 MANIFEST_UNKNOWN", http.MethodGet, "", `{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}`, true},
		{"GET 404 Harbor NOT_FOUND", http.MethodGet, "", `{"errors":[{"code":"NOT_FOUND","message":"artifact app:missing not found"}]}`, true},
		{"GET 404 with no body", http.MethodGet, "", "", true},
		{"GET 404 NAME_UNKNOWN", http.MethodGet, "", `{"errors":[{"code":"NAME_UNKNOWN","message":"repository name not known to registry"}]}`, false},
		{"HTML GET 404 from a proxy", http.MethodGet, "text/html", proxyPage, false},
		{"plain-text GET 404 from a router", http.MethodGet, "text/plain; charset=utf-8", "404 page not found\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref := missing
			if tc.name == "registry HEAD 404, repository unknown" {
				ref = regtest.Must(reg.Repo("nowhere"))(t).Tag("1")
			}
			if tc.method != "" {
				f := regtest.NewFaults(regtest.Fault{Kind: regtest.FaultAnswer, Route: regtest.RouteManifestByTag,
					Method: tc.method, Status: http.StatusNotFound, ContentType: tc.contentType, Body: tc.body})
				reg.SetMiddleware(f.Middleware)
				defer reg.SetMiddleware(nil)
			}
			c := New(WithRetryBase(time.Millisecond))
			var err error
			if tc.method == http.MethodGet {
				_, err = c.Get(ctx, ref)
				if IsNotFound(err) != tc.absent {
					t.Fatalf("GET: IsNotFound = %t, want %t: %v", IsNotFound(err), tc.absent, err)
				}
			} else {
				var got any
				h, herr := c.Head(ctx, ref)
				got, err = h, herr
				if tc.absent && (herr != nil || h != nil) {
					t.Fatalf("HEAD: %v, %v; want absent", got, herr)
				}
				if tc.absent {
					return
				}
			}
			if tc.absent {
				return
			}
			if !errors.Is(err, ErrUnexpectedNotFound) || !IsRegistryError(err) {
				t.Fatalf("%v: want ErrUnexpectedNotFound, a registry error", err)
			}
		})
	}
}

func TestIsRegistryError(t *testing.T) {
	for err, want := range map[error]bool{
		context.Canceled: true, &DigestMismatchError{}: true, ErrManifestTooLarge: true, ErrUnexpectedNotFound: true,
		ErrTagExists: false, errors.New("invalid signature"): false, nil: false,
	} {
		if got := IsRegistryError(err); got != want {
			t.Errorf("%v: %t, want %t", err, got, want)
		}
	}
}
