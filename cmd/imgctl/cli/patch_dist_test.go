package cli

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/fleet"
	"github.com/imgctl/imgctl/internal/testing/disttest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/policy"
	"github.com/imgctl/imgctl/snapshot"
)

// Windows revisions of the fleet's bases: January's and February's
// cumulative updates of each LTSC release.
const (
	w22Jan = "10.0.20348.4052"
	w22Feb = "10.0.20348.4171"
)

// fleetBases are one month's base images.
type fleetBases struct {
	w22, w25 v1.Image
	lin      [2]v1.Image
}

func newFleetBases(t *testing.T, month string) fleetBases {
	t.Helper()
	v22, v25 := w22Jan, winJan
	if month == "feb" {
		v22, v25 = w22Feb, winFeb
	}
	return fleetBases{
		w22: regtest.Must(regtest.WindowsBaseImage(v22))(t),
		w25: regtest.Must(regtest.WindowsBaseImage(v25))(t),
		lin: linuxBasePair(t, month),
	}
}

// pushFleetBases tags the month's bases: base/nanoserver:ltsc2022 and
// :ltsc2025, and the Linux base at linuxRepo:latest.
func pushFleetBases(t *testing.T, reg registryHost, b fleetBases, linuxRepo string) {
	t.Helper()
	push(t, reg, "base/nanoserver:ltsc2022", index(t, regtest.Entry{Image: b.w22}))
	push(t, reg, "base/nanoserver:ltsc2025", index(t, regtest.Entry{Image: b.w25}))
	push(t, reg, linuxRepo+":latest", index(t, regtest.Entry{Image: b.lin[0]}, regtest.Entry{Image: b.lin[1]}))
}

// fleetApp is an app index with linux/amd64, linux/arm64, ltsc2022 and
// ltsc2025 variants, each on the given bases and annotated with them as
// imgctl build does.
func fleetApp(t *testing.T, host, seed, linuxRepo string, w22, w25 v1.Image, lin [2]v1.Image) v1.ImageIndex {
	t.Helper()
	ann := func(base string, img v1.Image) regtest.ImageOption {
		return regtest.WithAnnotations(map[string]string{
			snapshot.AnnotationBaseName: host + "/" + base, snapshot.AnnotationBaseDigest: digestOf(t, img),
		})
	}
	var es []regtest.Entry
	for i, arch := range []string{"amd64", "arm64"} {
		img := regtest.Must(regtest.LinuxImage(arch, regtest.WithBase(lin[i]), regtest.WithSeed(seed), ann(linuxRepo+":latest", lin[i])))(t)
		es = append(es, regtest.Entry{Image: img})
	}
	for _, w := range []struct {
		base string
		img  v1.Image
	}{{"base/nanoserver:ltsc2022", w22}, {"base/nanoserver:ltsc2025", w25}} {
		img := regtest.Must(regtest.WindowsImage("", regtest.WithBase(w.img), regtest.WithSeed(seed), ann(w.base, w.img)))(t)
		es = append(es, regtest.Entry{Image: img})
	}
	return index(t, es...)
}

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
// (by i mod 20), and the same two failing ones.
func fleetFixtureN(t *testing.T, reg registryHost, n int) ([]fleetCase, string) {
	t.Helper()
	host := reg.Host()
	var cases []fleetCase
	for i := range n {
		c := fleetCase{repo: fmt.Sprintf("team%d/app%d", i%3, i), tag: "1.0.0", linuxRepo: "base/distroless", want: fleet.Promoted, newTag: "1.0.1"}
		switch k := i % 20; {
		case k < 5:
			c.kind, c.want, c.newTag = "current", fleet.Current, ""
		case k < 12:
			c.kind, c.tag, c.newTag = "stale22", "2.3.4", "2.3.5"
		default:
			c.kind = "both"
		}
		if i == 6 { // 2.3.5 is taken by another release: the next free patch
			c.newTag = "2.3.6"
		}
		if i%20 >= 16 {
			c.tag, c.newTag = "latest", "latest-r1"
		}
		cases = append(cases, c)
	}
	cases = append(cases,
		fleetCase{repo: "team0/policy", tag: "1.0.0", kind: "both", linuxRepo: "other/distroless", want: fleet.Failed, failure: fleet.FailureCheck},
		// newTag is where it goes when the repository accepts writes
		// (TestDistPatchCrash does not lock it).
		fleetCase{repo: "locked/app", tag: "1.0.0", kind: "both", linuxRepo: "base/distroless", want: fleet.Failed, failure: fleet.FailureError, newTag: "1.0.1"},
	)
	jan, feb := newFleetBases(t, "jan"), newFleetBases(t, "feb")
	pushFleetBases(t, reg, jan, "base/distroless")
	pushFleetBases(t, reg, jan, "other/distroless")
	build := func(c fleetCase) {
		switch c.kind {
		case "current":
			push(t, reg, c.repo+":"+c.tag, fleetApp(t, host, c.repo, c.linuxRepo, feb.w22, feb.w25, feb.lin))
		case "stale22":
			push(t, reg, c.repo+":"+c.tag, fleetApp(t, host, c.repo, c.linuxRepo, jan.w22, feb.w25, feb.lin))
		default:
			push(t, reg, c.repo+":"+c.tag, fleetApp(t, host, c.repo, c.linuxRepo, jan.w22, jan.w25, jan.lin))
		}
	}
	for _, c := range cases {
		if c.kind == "both" {
			build(c)
		}
	}
	// The February bases are published before the images that use them
	// (their base layers must be in the base repositories).
	pushFleetBases(t, reg, feb, "base/distroless")
	pushFleetBases(t, reg, feb, "other/distroless")
	for _, c := range cases {
		if c.kind != "both" {
			build(c)
		}
	}
	push(t, reg, cases[6].repo+":2.3.5", index(t, regtest.Entry{Image: regtest.Must(regtest.LinuxImage("amd64", regtest.WithSeed("other")))(t)}))
	var list strings.Builder
	list.WriteString("# the fleet\n\n")
	for _, c := range cases {
		fmt.Fprintf(&list, "%s/%s:%s  # %s\n", host, c.repo, c.tag, c.kind)
	}
	file := filepath.Join(t.TempDir(), "releases.txt")
	if err := os.WriteFile(file, []byte(list.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return cases, file
}

// fleetPolicy writes a policy that allows bases under base/ only.
func fleetPolicy(t *testing.T, host string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "policy.yaml")
	body := fmt.Sprintf("version: 1\ntargets: [ltsc2022, ltsc2025]\nrequirePlatforms: [linux/amd64, linux/arm64, windows/amd64:10.0.20348, windows/amd64:10.0.26100]\nallowedBases: [%s/base/*]\n", host)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
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
