package cli

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/imgctl/imgctl/fleet"
	"github.com/imgctl/imgctl/internal/testing/disttest"
	"github.com/imgctl/imgctl/internal/testing/fleettest"
	"github.com/imgctl/imgctl/policy"
)

// Windows revisions of the fleet's ltsc2022 bases (fleettest).
const (
	w22Jan = fleettest.W22Jan
	w22Feb = fleettest.W22Feb
)

// patchReport is the -o json report, decoded strictly.
type patchReport struct {
	Schema  string        `json:"schema"`
	Images  []fleet.Image `json:"images"`
	Summary fleet.Summary `json:"summary"`
}

func decodePatch(t *testing.T, s string) patchReport {
	t.Helper()
	var r patchReport
	decodeStrict(t, s, &r)
	if r.Schema != fleet.Schema || r.Images == nil {
		t.Fatalf("patch JSON misses contract fields: %s", s)
	}
	return r
}

// byRef indexes a report's images by reference.
func (r patchReport) byRef() map[string]fleet.Image {
	m := map[string]fleet.Image{}
	for _, im := range r.Images {
		m[im.Ref] = im
	}
	return m
}

// lockRepository makes reg refuse every write under repo, as a
// registry's access rules refuse a repository the user may only read.
func lockRepository(reg *disttest.Registry, repo string) {
	reg.SetMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/v2/"+repo+"/") && r.Method != http.MethodGet && r.Method != http.MethodHead {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusForbidden)
				fmt.Fprint(w, `{"errors":[{"code":"DENIED","message":"requested access to the resource is denied"}]}`)
				return
			}
			next.ServeHTTP(w, r)
		})
	})
}

// fleetCase is one image of the e2e fleet and what patch must do with it.
type fleetCase struct {
	repo, tag string
	kind      string // current, stale22 (stale in ltsc2022 only), both
	linuxRepo string
	want      fleet.Outcome
	failure   string
	newTag    string
}

// fleetFixture publishes January's bases, the images built on them, then
// February's bases and the images built on those, and returns the cases
// and the list file.
func fleetFixture(t *testing.T, reg registryHost) ([]fleetCase, string) {
	return fleetFixtureN(t, reg, 20)
}

// fleetFixtureN is fleetFixture with n images in the same proportions
// (by i mod 20), and the same two failing ones (fleettest.Publish).
func fleetFixtureN(t *testing.T, reg registryHost, n int) ([]fleetCase, string) {
	t.Helper()
	fcs, err := fleettest.Publish(reg, fleettest.Options{Images: n, Failing: true})
	if err != nil {
		t.Fatal(err)
	}
	var cases []fleetCase
	for _, c := range fcs {
		cases = append(cases, fleetCase{repo: c.Repo, tag: c.Tag, kind: c.Kind, linuxRepo: c.LinuxRepo, want: c.Want, failure: c.Failure, newTag: c.NewTag})
	}
	file := filepath.Join(t.TempDir(), "releases.txt")
	if err := os.WriteFile(file, []byte(fleettest.List(reg.Host(), fcs)), 0o644); err != nil {
		t.Fatal(err)
	}
	return cases, file
}

// fleetPolicy writes a policy that allows bases under base/ only.
func fleetPolicy(t *testing.T, host string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(p, []byte(fleettest.Policy(host)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// fleetKeys writes a cosign key pair and returns the private and public
// key paths; COSIGN_PASSWORD is set for the test.
func fleetKeys(t *testing.T) (string, string) {
	t.Helper()
	prefix := filepath.Join(t.TempDir(), "release")
	t.Setenv("COSIGN_PASSWORD", "s3cret")
	if out, errOut, code := run(t, "keygen", "--output-key-prefix", prefix); code != 0 {
		t.Fatalf("keygen: exit %d\n%s%s", code, out, errOut)
	}
	return prefix + ".key", prefix + ".pub"
}

// TestDistPatchFleet runs imgctl patch over 22 images on the distribution
// registry: current ones are left alone, stale ones (in one Windows
// release, or in every base) are promoted to the next free release tag,
// verified and signed; one fails its policy, one sits in a repository that
// refuses writes. Every promoted index passes verify --key --policy, each
// base tag is read once, and a rerun promotes nothing again.
func TestDistPatchFleet(t *testing.T) {
	relFastRetries(t)
	reg := disttest.New(t, disttest.Options{})
	host := reg.Host()
	cases, list := fleetFixture(t, reg)
	key, pub := fleetKeys(t)
	pol := fleetPolicy(t, host)
	lockRepository(reg, "locked/app")

	reg.ResetRequests()
	out, errOut, code := run(t, "patch", "-f", list, "--key", key, "--policy", pol, "--jobs", "4", "-o", "json")
	if code != ExitError {
		t.Fatalf("patch: exit %d, want 2 (one repository refuses writes)\n%s%s", code, out, errOut)
	}
	rep := decodePatch(t, out)
	got := rep.byRef()
	t.Logf("summary: %+v", rep.Summary)
	if len(rep.Images) != len(cases) || rep.Summary.Total != len(cases) {
		t.Fatalf("%d images reported, want %d:\n%s", len(rep.Images), len(cases), out)
	}
	// Each base tag is resolved once for the whole run.
	for _, p := range []string{"/v2/base/nanoserver/manifests/ltsc2022", "/v2/base/nanoserver/manifests/ltsc2025", "/v2/base/distroless/manifests/latest"} {
		if n := reg.Count(http.MethodGet, p) + reg.Count(http.MethodHead, p); n != 1 {
			t.Errorf("%s read %d times, want once per run", p, n)
		}
	}
	for _, c := range cases {
		ref := host + "/" + c.repo + ":" + c.tag
		im, ok := got[ref]
		if !ok {
			t.Errorf("%s: not in the report", ref)
			continue
		}
		if im.Outcome != c.want || im.Failure != c.failure {
			t.Errorf("%s (%s): outcome %s/%s (%s), want %s/%s", ref, c.kind, im.Outcome, im.Failure, im.Reason, c.want, c.failure)
			continue
		}
		checkFleetImage(t, reg, c, im, pub, pol)
	}
	if im := got[host+"/team0/policy:1.0.0"]; !hasRule(im, policy.RuleBaseNotAllowed) {
		t.Errorf("the policy failure does not name %s: %+v", policy.RuleBaseNotAllowed, im.Findings)
	}
	if distHead(t, reg, host+"/team0/policy:1.0.1") != "" || distHead(t, reg, host+"/locked/app:1.0.1") != "" {
		t.Error("a failed image got a release tag")
	}

	// A rerun finds every promotion and promotes nothing again.
	out, errOut, code = run(t, "patch", "-f", list, "--key", key, "--policy", pol, "-o", "json")
	if code != ExitError {
		t.Fatalf("patch again: exit %d\n%s%s", code, out, errOut)
	}
	again := decodePatch(t, out).byRef()
	for _, c := range cases {
		ref := host + "/" + c.repo + ":" + c.tag
		first, second := got[ref], again[ref]
		if second.Outcome != first.Outcome || second.Tag != first.Tag || second.NewDigest != first.NewDigest {
			t.Errorf("%s: the rerun says %s %s@%s, the first run %s %s@%s", ref, second.Outcome, second.Tag, second.NewDigest, first.Outcome, first.Tag, first.NewDigest)
		}
		if c.want == fleet.Promoted && !second.Earlier {
			t.Errorf("%s: the rerun did not find the earlier promotion: %+v", ref, second)
		}
	}
}

// checkFleetImage checks one image's report against the registry: a
// promoted index is at its new tag, passes verify --key --policy, and its
// stale variants moved to February's os.version.
func checkFleetImage(t *testing.T, reg *disttest.Registry, c fleetCase, im fleet.Image, pub, pol string) {
	t.Helper()
	if c.want == fleet.Failed {
		return
	}
	if len(im.Variants) != 4 {
		t.Errorf("%s: %d variants reported, want 4", im.Ref, len(im.Variants))
	}
	for _, v := range im.Variants {
		want := map[bool]string{true: w22Feb, false: winFeb}[strings.Contains(v.Platform, "20348")]
		if strings.HasPrefix(v.Platform, "windows") && v.After.OSVersion != want {
			t.Errorf("%s %s: after os.version %s, want %s", im.Ref, v.Platform, v.After.OSVersion, want)
		}
		if stale := c.kind == "both" || (c.kind == "stale22" && strings.Contains(v.Platform, "20348")); v.Stale != stale {
			t.Errorf("%s %s: stale %v, want %v", im.Ref, v.Platform, v.Stale, stale)
		}
	}
	if c.want != fleet.Promoted {
		return
	}
	tag := reg.Host() + "/" + c.repo + ":" + c.newTag
	if im.Tag != tag {
		t.Errorf("%s: promoted to %s, want %s", im.Ref, im.Tag, tag)
		return
	}
	if d := distHead(t, reg, tag); d == "" || d != im.NewDigest {
		t.Errorf("%s is at %q, the report says %s", tag, d, im.NewDigest)
	}
	out, errOut, code := run(t, "verify", tag, "--key", pub, "--policy", pol, "-o", "json")
	if r := decodeReport(t, out); code != 0 || !*r.Passed {
		t.Errorf("verify --key --policy %s: exit %d\n%s%s", tag, code, out, errOut)
	}
}

func hasRule(im fleet.Image, rule string) bool {
	for _, f := range im.Findings {
		if f.Rule == rule {
			return true
		}
	}
	return false
}
