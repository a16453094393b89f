package cli

import (
	"net/http"
	"testing"

	"github.com/imgctl/imgctl/fleet"
	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// TestPatchFaults runs the fleet under the fault harness: 429s with
// Retry-After on one repository's manifests, and a 500 on every request
// to another stale image's repository. The 429s are waited out; the
// image behind the 500 fails with an error (exit 2) and every other image
// ends as it would without faults.
func TestPatchFaults(t *testing.T) {
	relFastRetries(t)
	reg := regtest.New(t)
	cases, list := fleetFixture(t, reg)
	key, _ := fleetKeys(t)
	pol := fleetPolicy(t, reg.Host())
	broken, slowed := cases[12].repo, cases[5].repo
	f := regtest.NewFaults(
		regtest.Fault{Kind: regtest.Fault500, Repo: broken},
		regtest.Fault{Kind: regtest.Fault429, Route: regtest.RouteManifest, Method: http.MethodGet, Repo: slowed, First: 3, RetryAfter: "1"},
	)
	reg.SetMiddleware(f.Middleware)
	out, errOut, code := run(t, "patch", "-f", list, "--key", key, "--policy", pol, "--jobs", "4", "-o", "json")
	reg.SetMiddleware(nil)
	if code != ExitError {
		t.Fatalf("patch: exit %d, want 2\n%s%s", code, out, errOut)
	}
	got := decodePatch(t, out).byRef()
	for _, c := range cases {
		ref := reg.Host() + "/" + c.repo + ":" + c.tag
		im := got[ref]
		want, failure := c.want, c.failure
		switch c.repo {
		case broken:
			want, failure = fleet.Failed, fleet.FailureError
		case "locked/app": // nothing locks it here
			want, failure = fleet.Promoted, ""
		}
		if im.Outcome != want || im.Failure != failure {
			t.Errorf("%s: %s/%s (%s), want %s/%s", ref, im.Outcome, im.Failure, im.Reason, want, failure)
		}
		if want == fleet.Promoted && im.Tag != reg.Host()+"/"+c.repo+":"+c.newTag {
			t.Errorf("%s: promoted to %s, want tag %s", ref, im.Tag, c.newTag)
		}
	}
	if f.Injected() < 4 {
		t.Errorf("%d faults injected, want the 3 429s and at least one 500", f.Injected())
	}
}
