package cli

import (
	"encoding/json"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/rebase"
	"github.com/imgctl/imgctl/snapshot"
)

const (
	winJan   = "10.0.26100.33438"
	winFeb   = "10.0.26100.33674"
	winOther = "10.0.26200.7019"
)

// rebaseFixture publishes base/nanoserver:ltsc2025 and
// base/distroless:latest, and app:1 built on them (linux/amd64,
// linux/arm64, windows 26100.33438), each manifest annotated with its base
// as imgctl build does. It returns the app reference.
func rebaseFixture(t *testing.T, reg registryHost) string {
	t.Helper()
	win := regtest.Must(regtest.WindowsBaseImage(winJan))(t)
	lin := linuxBasePair(t, "jan")
	push(t, reg, "base/nanoserver:ltsc2025", index(t, regtest.Entry{Image: win}))
	push(t, reg, "base/distroless:latest", index(t, regtest.Entry{Image: lin[0]}, regtest.Entry{Image: lin[1]}))
	var es []regtest.Entry
	for i, b := range []v1.Image{lin[0], lin[1], win} {
		ann := regtest.WithAnnotations(map[string]string{
			snapshot.AnnotationBaseName: reg.Host() + "/base/distroless:latest", snapshot.AnnotationBaseDigest: digestOf(t, b),
		})
		var img v1.Image
		if i == 2 {
			ann = regtest.WithAnnotations(map[string]string{
				snapshot.AnnotationBaseName: reg.Host() + "/base/nanoserver:ltsc2025", snapshot.AnnotationBaseDigest: digestOf(t, b),
			})
			img = regtest.Must(regtest.WindowsImage("", regtest.WithBase(b), regtest.WithSeed("app"), ann))(t)
		} else {
			img = regtest.Must(regtest.LinuxImage([]string{"amd64", "arm64"}[i], regtest.WithBase(b), regtest.WithSeed("app"), ann))(t)
		}
		es = append(es, regtest.Entry{Image: img}, attEntry(t, img))
	}
	return push(t, reg, "app:1", index(t, es...))
}

// moveBases publishes new images under both base tags.
func moveBases(t *testing.T, reg registryHost, winVersion string) {
	t.Helper()
	push(t, reg, "base/nanoserver:ltsc2025", index(t, regtest.Entry{Image: regtest.Must(regtest.WindowsBaseImage(winVersion))(t)}))
	lin := linuxBasePair(t, "feb")
	push(t, reg, "base/distroless:latest", index(t, regtest.Entry{Image: lin[0]}, regtest.Entry{Image: lin[1]}))
}

func linuxBasePair(t *testing.T, seed string) [2]v1.Image {
	t.Helper()
	return [2]v1.Image{
		regtest.Must(regtest.LinuxImage("amd64", regtest.WithSeed(seed)))(t),
		regtest.Must(regtest.LinuxImage("arm64", regtest.WithSeed(seed)))(t),
	}
}

// rebaseJSONOut is the rebase -o json contract, decoded strictly.
type rebaseJSONOut struct {
	Ref       string           `json:"ref"`
	Digest    string           `json:"digest"`
	Stale     bool             `json:"stale"`
	Variants  []rebase.Variant `json:"variants"`
	Tag       string           `json:"tag"`
	Tags      []string         `json:"tags"`
	Pushed    bool             `json:"pushed"`
	Notes     []string         `json:"notes"`
	NewDigest string           `json:"new_digest"`
	DryRun    bool             `json:"dry_run"`
	Verify    *jsonReport      `json:"verify"`
}

func decodeStrict(t *testing.T, s string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decoding JSON: %v\n%s", err, s)
	}
}

// provenanceVersion reads builder.version["imgctl"] from the provenance
// in the attestation manifest app@digest.
func provenanceVersion(t *testing.T, reg *regtest.Registry, digest string) string {
	t.Helper()
	img := regtest.Must(remote.Image(reg.MustRef(t, "app@"+digest)))(t)
	layers := regtest.Must(img.Layers())(t)
	if len(layers) != 1 {
		t.Fatalf("attestation %s: %d layers", digest, len(layers))
	}
	var st struct {
		Predicate struct {
			RunDetails struct {
				Builder struct {
					Version map[string]string `json:"version"`
				} `json:"builder"`
			} `json:"runDetails"`
		} `json:"predicate"`
	}
	rc := regtest.Must(layers[0].Uncompressed())(t)
	defer rc.Close()
	if err := json.NewDecoder(rc).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st.Predicate.RunDetails.Builder.Version["imgctl"]
}

func TestRebaseCommand(t *testing.T) {
	reg := regtest.New(t)
	app := rebaseFixture(t, reg)
	moveBases(t, reg, winFeb)
	to := func(tag string) string { return reg.Host() + "/app:" + tag }

	reg.ResetStats()
	out, errOut, code := run(t, "rebase", app, "-t", to("2"), "--dry-run")
	if code != 0 || !strings.Contains(out, "plan: ") || strings.Count(out, " rebase\n") != 3 ||
		!strings.Contains(out, winJan+"  "+winFeb) {
		t.Fatalf("dry run: exit %d\n%s%s", code, out, errOut)
	}
	out, _, code = run(t, "rebase", app, "-t", to("2"), "--dry-run", "-o", "json")
	var plan rebaseJSONOut
	decodeStrict(t, out, &plan)
	if code != 0 || !plan.DryRun || plan.Pushed || plan.NewDigest == "" || plan.Variants[2].NewOSVersion != winFeb ||
		plan.Variants[2].OldBase == plan.Variants[2].NewBase || plan.Variants[2].OldOSVersion != winJan {
		t.Fatalf("dry run JSON: exit %d %+v", code, plan)
	}
	if st := reg.Stats(); st.Put != 0 || st.Post != 0 {
		t.Errorf("dry runs wrote: %s", st)
	}

	reg.ResetStats()
	out, errOut, code = run(t, "rebase", app, "-t", to("2"), "-v", "-o", "json")
	st := reg.Stats()
	var res rebaseJSONOut
	decodeStrict(t, out, &res)
	// The plan gives the real run's variants and index digest: the
	// provenance records the inputs' times, not the run's.
	if code != 0 || res.NewDigest == "" || res.NewDigest != plan.NewDigest || res.Verify == nil || !*res.Verify.Passed ||
		strings.Count(errOut, "describes the image before the rebase") != 3 || !strings.Contains(errOut, "registry requests") ||
		!strings.Contains(errOut, "note: reading the base images from their registries directly") {
		t.Fatalf("rebase: exit %d\n%s%s", code, out, errOut)
	}
	for i, v := range res.Variants {
		if v.NewDigest == "" || v.NewDigest != plan.Variants[i].NewDigest || v.Provenance == "" {
			t.Errorf("variant %s: rebased to %q (provenance %q), planned %q", v.Platform, v.NewDigest, v.Provenance, plan.Variants[i].NewDigest)
		}
	}
	// Uploads: the 3 new configs and, per variant, the provenance
	// attestation's config and statement (a few hundred bytes each), never
	// a layer: the base layers are mounted.
	if st.Mounts != 3 || st.BlobBytesReceived == 0 || st.BlobBytesReceived > 2048+3*4096 {
		t.Errorf("layers did not move by mount only (3 base layers mounted, 3 configs and 3 attestations uploaded): %s", st)
	}
	// The provenance records the version imgctl version reports.
	out, _, _ = run(t, "version", "-o", "json")
	var ver VersionInfo
	decodeStrict(t, out, &ver)
	if got := provenanceVersion(t, reg, res.Variants[0].Provenance); ver.Version == "" || !strings.HasPrefix(got, ver.Version) {
		t.Errorf("provenance records imgctl %q, imgctl version says %q", got, ver.Version)
	}
	out, errOut, code = run(t, "rebase", app, "-t", to("2"))
	if code != 0 || !strings.HasPrefix(out, res.NewDigest+"\n") || !strings.Contains(out, "already points at this index") {
		t.Errorf("repeated rebase onto its own tag: exit %d, want a no-op\n%s%s", code, out, errOut)
	}

	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"result is current", []string{"rebase", to("2"), "-t", to("3")}, 0, "nothing to push"},
		{"existing tag", []string{"rebase", app, "-t", to("1")}, 2, "refusing to overwrite"},
		{"no tag", []string{"rebase", app}, 2, "-t/--tag is required"},
		{"bad base flag", []string{"rebase", app, "-t", to("4"), "--base", "windows"}, 2, "want os=REF"},
		{"bad builder id", []string{"rebase", app, "-t", to("4"), "--builder-id", "ci.example.com"}, 2, "builder id must be an absolute URI"},
	} {
		reg.ResetStats()
		out, errOut, code := run(t, tc.args...)
		if code != tc.code || !strings.Contains(out+errOut, tc.want) {
			t.Errorf("%s: exit %d, want %d and %q\n%s%s", tc.name, code, tc.code, tc.want, out, errOut)
		}
		if st := reg.Stats(); st.Put != 0 {
			t.Errorf("%s: pushed %s", tc.name, st)
		}
	}
}

// TestRebaseSourceDateEpoch: $SOURCE_DATE_EPOCH sets the provenance's
// times, so it changes the digest; one that is not whole seconds is a
// usage error that writes nothing.
func TestRebaseSourceDateEpoch(t *testing.T) {
	reg := regtest.New(t)
	app := rebaseFixture(t, reg)
	moveBases(t, reg, winFeb)
	to := reg.Host() + "/app:2"
	out, _, code := run(t, "rebase", app, "-t", to, "--dry-run", "-o", "json")
	var plain rebaseJSONOut
	decodeStrict(t, out, &plain)
	t.Setenv("SOURCE_DATE_EPOCH", "1764633600")
	out, errOut, code2 := run(t, "rebase", app, "-t", to, "--dry-run", "-o", "json")
	var epoch rebaseJSONOut
	decodeStrict(t, out, &epoch)
	if code != 0 || code2 != 0 || epoch.NewDigest == "" || epoch.NewDigest == plain.NewDigest {
		t.Fatalf("exit %d and %d: the epoch did not change the digest (%s): %s", code, code2, epoch.NewDigest, errOut)
	}
	t.Setenv("SOURCE_DATE_EPOCH", "yesterday")
	reg.ResetStats()
	_, errOut, code = run(t, "rebase", app, "-t", to)
	if code != 2 || !strings.Contains(errOut, "SOURCE_DATE_EPOCH") {
		t.Errorf("bad SOURCE_DATE_EPOCH: exit %d: %s", code, errOut)
	}
	if st := reg.Stats(); st.Put != 0 || st.Post != 0 {
		t.Errorf("a usage error wrote: %s", st)
	}
}

func TestRebaseBuildChange(t *testing.T) {
	reg := regtest.New(t)
	app := rebaseFixture(t, reg)
	moveBases(t, reg, winOther)
	if out, errOut, code := run(t, "rebase", app, "-t", reg.Host()+"/app:2"); code != 2 || !strings.Contains(errOut, "different Windows build") ||
		!strings.Contains(errOut, "use --allow-build-change to move it") {
		t.Fatalf("without the flag: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code := run(t, "rebase", app, "-t", reg.Host()+"/app:2", "--allow-build-change")
	if code != 0 || !strings.Contains(errOut, "moved from build 26100 to 26200") {
		t.Fatalf("with the flag: exit %d\n%s%s", code, out, errOut)
	}
	if out, _, _ := run(t, "inspect", reg.Host()+"/app:2"); !strings.Contains(out, winOther) {
		t.Errorf("inspect:\n%s", out)
	}
}
