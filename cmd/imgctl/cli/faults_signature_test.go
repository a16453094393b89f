package cli

import (
	"net/http"
	"strings"
	"testing"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// TestFaultSignatureRead: a registry that fails while the .sig tags are
// read (500, 503 or 429 past the retries, a dropped connection, a 404 that
// is not its "manifest unknown") makes `verify --key` and `promote --key`
// exit 2 with the fault named, like any registry error: not exit 1 with a
// bad-signature or unsigned finding, and not "refusing to promote". CI can
// then tell an infrastructure fault from a policy failure.
func TestFaultSignatureRead(t *testing.T) {
	relFastRetries(t)
	sv, pub := sigKey(t)
	sigRead := func(k regtest.FaultKind) regtest.Fault {
		return regtest.Fault{Kind: k, Route: regtest.RouteManifestByTag, Method: http.MethodGet, Suffix: ".sig", RetryAfter: "0"}
	}
	nameUnknown := sigRead(regtest.FaultAnswer)
	nameUnknown.Status, nameUnknown.Body = http.StatusNotFound, `{"errors":[{"code":"NAME_UNKNOWN","message":"repository name not known to registry"}]}`
	html := sigRead(regtest.FaultAnswer)
	html.Status, html.ContentType, html.Body = http.StatusNotFound, "text/html", "<html><body><h1>404 Not Found</h1></body></html>"
	for _, fc := range []struct {
		name  string
		fault regtest.Fault
		says  []string
	}{
		{"500", sigRead(regtest.Fault500), relFaultMessage[regtest.Fault500]},
		{"503", sigRead(regtest.Fault503), relFaultMessage[regtest.Fault503]},
		{"429", sigRead(regtest.Fault429), relFaultMessage[regtest.Fault429]},
		{"reset", sigRead(regtest.FaultReset), relFaultMessage[regtest.FaultReset]},
		{"404 NAME_UNKNOWN", nameUnknown, []string{"NAME_UNKNOWN"}},
		{"404 HTML", html, []string{"HTML"}},
	} {
		for _, verb := range []string{"verify", "promote"} {
			t.Run(fc.name+"/"+verb, func(t *testing.T) {
				reg := regtest.New(t)
				signed, _ := sigPush(t, reg, "ci/app:1", regtest.Must(regtest.MultiOSIndex())(t), sv)
				args := []string{"verify", signed, "--key", pub}
				if verb == "promote" {
					args = []string{"promote", signed, reg.Host() + "/release/app:1", "--key", pub}
				}
				f := regtest.NewFaults(fc.fault)
				reg.SetMiddleware(f.Middleware)
				out, errOut, code := run(t, args...)
				reg.SetMiddleware(nil)
				survived := code == ExitError && out == "" && strings.HasPrefix(errOut, "imgctl: ") && relContainsAny(errOut, fc.says) &&
					!strings.Contains(errOut, "refusing to promote") && f.Injected() > 0
				if verb == "promote" {
					survived = survived && relTagAbsent(t, reg, "release/app:1")
				}
				regtest.LogFault(t, fc.name+"-signature-read", verb+"-key", f.Injected(), survived)
				if !survived {
					t.Errorf("exit %d, %d faults; want exit 2 naming %q\nstdout %q\nstderr %s", code, f.Injected(), fc.says, out, errOut)
				}
			})
		}
	}
}
