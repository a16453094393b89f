package cli

import (
	"encoding/base64"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docker/cli/cli/config"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/imgctl/imgctl/internal/testing/disttest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/sign"
)

// The tests in this file run imgctl against the CNCF distribution registry
// (internal/testing/disttest): htpasswd auth on every request, credentials from the
// Docker config, blobs linked per repository, and no referrers API. They
// set DOCKER_CONFIG, so none is parallel.

// distLogin starts a distribution registry and logs in to it, as docker
// login would, in a Docker config the test's process reads (the Docker
// CLI's config package keeps its directory; it is set back afterwards).
func distLogin(t *testing.T) *disttest.Registry {
	t.Helper()
	dst := disttest.New(t, disttest.Options{})
	dst.Login(t)
	prevDir := config.Dir()
	config.SetDir(os.Getenv(config.EnvOverrideConfigDir))
	t.Cleanup(func() { config.SetDir(prevDir) })
	return dst
}

// distHead returns the digest s (a full reference) points to on reg, read
// with reg's credentials, or "" when it does not exist.
func distHead(t *testing.T, reg *disttest.Registry, s string) string {
	t.Helper()
	ref, err := name.ParseReference(s, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := reg.Head(ref)
	var terr *transport.Error
	if errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound {
		return ""
	}
	if err != nil {
		t.Fatalf("HEAD %s: %v", s, err)
	}
	return desc.Digest.String()
}

// distIndex reads the index s names on reg.
func distIndex(t *testing.T, reg *disttest.Registry, s string) (name.Reference, *v1.IndexManifest) {
	t.Helper()
	ref, err := name.ParseReference(s, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	ii, err := remote.Index(ref, reg.Remote()...)
	if err != nil {
		t.Fatalf("reading %s: %v", s, err)
	}
	im, err := ii.IndexManifest()
	return ref, must(t, im, err)
}

// distConfig reads the config of the image d in ref's repository.
func distConfig(t *testing.T, reg *disttest.Registry, ref name.Reference, d v1.Hash) *v1.ConfigFile {
	t.Helper()
	img, err := remote.Image(ref.Context().Digest(d.String()), reg.Remote()...)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	return must(t, cfg, err)
}

// distNoSecret fails when any output holds a password, or a user:password
// pair in the base64 of the Docker config.
func distNoSecret(t *testing.T, what string, user string, passwords []string, outputs ...string) {
	t.Helper()
	for _, pw := range passwords {
		for _, secret := range []string{pw, base64.StdEncoding.EncodeToString([]byte(user + ":" + pw))} {
			for _, o := range outputs {
				if strings.Contains(o, secret) {
					t.Errorf("%s: the output holds a secret (%q):\n%s", what, secret, o)
				}
			}
		}
	}
}

// distUploads counts, among reg's recorded requests under repo, blob
// mounts that succeeded and blob uploads that went through the client.
func distUploads(reg *disttest.Registry, repo string) (mounts, uploads int) {
	prefix := "/v2/" + repo + "/blobs/uploads/"
	for _, q := range reg.Requests() {
		switch {
		case !strings.HasPrefix(q.Path, prefix):
		case q.Method == http.MethodPost && strings.Contains(q.Query, "mount=") && q.Status == http.StatusCreated:
			mounts++
		case q.Method == http.MethodPatch, q.Method == http.MethodPut:
			uploads++
		}
	}
	return mounts, uploads
}

// TestDistIndexCreate merges four single images into one index on the
// distribution registry, then reads it back with verify and resolve.
func TestDistIndexCreate(t *testing.T) {
	relFastRetries(t)
	reg := disttest.New(t, disttest.Options{})
	srcs := indexFixture(t, reg) // w22, amd64, w25, arm64
	srcDigest := make([]string, len(srcs))
	for i, s := range srcs {
		srcDigest[i] = distHead(t, reg, s)
	}
	target := reg.Host() + "/app:1"

	reg.ResetRequests()
	out, errOut, code := run(t, append([]string{"index", "create", "-v", "-t", target}, srcs...)...)
	distNoSecret(t, "index create -v", reg.User(), []string{reg.Password()}, out, errOut)
	if code != 0 {
		t.Fatalf("index create: exit %d\n%s%s", code, out, errOut)
	}
	digest, _, _ := strings.Cut(out, "\n")
	if got := distHead(t, reg, target); got != digest || !strings.HasPrefix(digest, "sha256:") {
		t.Fatalf("app:1 is at %q, index create printed %q", got, digest)
	}
	// Blobs are linked per repository: every blob of app must be mounted
	// from src, none copied through the client.
	if mounts, uploads := distUploads(reg, "app"); mounts == 0 || uploads != 0 {
		t.Errorf("%d mounts and %d uploads into app, want mounts only:\n%v", mounts, uploads, reg.Requests())
	}

	ref, im := distIndex(t, reg, target)
	wantOS := map[string]string{srcDigest[0]: regtest.OSVersionLTSC2022, srcDigest[2]: regtest.OSVersionLTSC2025}
	if len(im.Manifests) != 4 {
		t.Fatalf("index has %d entries, want 4", len(im.Manifests))
	}
	for _, m := range im.Manifests {
		if m.Platform == nil || m.Platform.OS != "windows" {
			continue
		}
		cfg := distConfig(t, reg, ref, m.Digest)
		if want := wantOS[m.Digest.String()]; want == "" || m.Platform.OSVersion != want || cfg.OSVersion != want {
			t.Errorf("windows entry %s: descriptor os.version %q, config %q, want %q", m.Digest, m.Platform.OSVersion, cfg.OSVersion, want)
		}
		delete(wantOS, m.Digest.String())
	}
	if len(wantOS) != 0 {
		t.Errorf("Windows images missing from the index: %v", wantOS)
	}

	out, errOut, code = run(t, "verify", target, "--windows", "ltsc2022,ltsc2025", "-o", "json")
	r := decodeReport(t, out)
	if code != 0 || !*r.Passed || r.Digest != digest {
		t.Fatalf("verify: exit %d\n%s%s", code, out, errOut)
	}
	selected := map[string]string{}
	for _, tg := range r.Targets {
		if tg.Engine == "containerd" {
			selected[tg.Target] = tg.Selected
		}
	}
	if selected["ltsc2022"] != srcDigest[0] || selected["ltsc2025"] != srcDigest[2] {
		t.Errorf("containerd selects %v, want ltsc2022=%s ltsc2025=%s", selected, srcDigest[0], srcDigest[2])
	}

	for _, tc := range []struct {
		platform string
		code     int
		want     string
	}{
		{"windows/amd64:" + regtest.OSVersionLTSC2025, 0, srcDigest[2]},
		{"windows(" + regtest.OSVersionLTSC2022 + ")/amd64", 0, srcDigest[0]},
		{"linux/arm64", 0, srcDigest[3]},
		{"windows/amd64:10.0.17763.1", 1, ""},
	} {
		out, errOut, code := run(t, "resolve", target, "--platform", tc.platform)
		if code != tc.code || strings.TrimSpace(out) != tc.want && tc.code == 0 {
			t.Errorf("resolve %s: exit %d, %q; want exit %d, %q\n%s", tc.platform, code, out, tc.code, tc.want, errOut)
		}
	}

	if _, errOut, code := run(t, "index", "create", "-t", target, srcs[0]); code != ExitError || !strings.Contains(errOut, "refusing to overwrite") {
		t.Errorf("index create onto app:1: exit %d, %s", code, errOut)
	}
	if got := distHead(t, reg, target); got != digest {
		t.Errorf("app:1 moved to %s", got)
	}
}

// TestDistBasesRebase: bases reads the base annotations and the current
// base tags, and rebase moves every variant onto new bases with mounts
// from the base repositories, keeping os.version in step.
func TestDistBasesRebase(t *testing.T) {
	relFastRetries(t)
	reg := disttest.New(t, disttest.Options{})
	app := rebaseFixture(t, reg)
	out, errOut, code := run(t, "bases", app)
	if code != 0 || !strings.Contains(out, "0 of 3 variant(s) stale") {
		t.Fatalf("bases of a current image: exit %d\n%s%s", code, out, errOut)
	}
	moveBases(t, reg, winFeb)
	out, errOut, code = run(t, "bases", app)
	if code != ExitFailed || !strings.Contains(out, "3 of 3 variant(s) stale") || !strings.Contains(out, winJan+"  "+winFeb+"  stale") {
		t.Fatalf("bases after the bases moved: exit %d\n%s%s", code, out, errOut)
	}

	to := reg.Host() + "/app:2"
	reg.ResetRequests()
	out, errOut, code = run(t, "rebase", app, "-t", to, "-o", "json")
	distNoSecret(t, "rebase", reg.User(), []string{reg.Password()}, out, errOut)
	var res rebaseJSONOut
	decodeStrict(t, out, &res)
	if code != 0 || !res.Pushed || res.Verify == nil || !*res.Verify.Passed {
		t.Fatalf("rebase: exit %d\n%s%s", code, out, errOut)
	}
	if got := distHead(t, reg, to); got != res.NewDigest {
		t.Fatalf("app:2 is at %q, rebase printed %q", got, res.NewDigest)
	}
	// The new base layers live in base/*: app gets them by mount only. The
	// uploads are the 3 new configs and, per variant, its provenance
	// attestation's config and statement.
	if mounts, uploads := distUploads(reg, "app"); mounts < 3 || uploads > 3+2*3 {
		t.Errorf("%d mounts and %d uploads into app, want the 3 new base layers mounted and at most the 3 configs and 3 attestations uploaded:\n%v",
			mounts, uploads, reg.Requests())
	}
	ref, im := distIndex(t, reg, to)
	windows := 0
	for _, m := range im.Manifests {
		if m.Platform == nil || m.Platform.OS != "windows" {
			continue
		}
		windows++
		if cfg := distConfig(t, reg, ref, m.Digest); m.Platform.OSVersion != winFeb || cfg.OSVersion != winFeb {
			t.Errorf("rebased windows entry: descriptor os.version %q, config %q, want %s", m.Platform.OSVersion, cfg.OSVersion, winFeb)
		}
	}
	if windows != 1 || len(res.Variants) != 3 || res.Variants[2].NewOSVersion != winFeb {
		t.Errorf("%d windows entries, variants %+v", windows, res.Variants)
	}
	if out, errOut, code := run(t, "bases", to); code != 0 || !strings.Contains(out, "0 of 3 variant(s) stale") {
		t.Errorf("bases of the rebased image: exit %d\n%s%s", code, out, errOut)
	}
}

// TestDistSignPromote signs with a cosign key (the sha256-<digest>.sig tags:
// this registry has no referrers API), verifies with the public key, and
// promotes within the registry and to a second one, signatures included.
func TestDistSignPromote(t *testing.T) {
	relFastRetries(t)
	reg := disttest.New(t, disttest.Options{})
	prod := disttest.New(t, disttest.Options{}) // logs in too: the config holds both
	prefix := filepath.Join(t.TempDir(), "release")
	t.Setenv("COSIGN_PASSWORD", "s3cret")
	if out, errOut, code := run(t, "keygen", "--output-key-prefix", prefix); code != 0 {
		t.Fatalf("keygen: exit %d\n%s%s", code, out, errOut)
	}
	key, pub := prefix+".key", prefix+".pub"
	src := push(t, reg, "ci/app:1", regtest.Must(regtest.MultiOSIndex())(t))
	digest := distHead(t, reg, src)
	_, im := distIndex(t, reg, src)

	out, _, code := run(t, "verify", src, "--key", pub, "-o", "json")
	if r := decodeReport(t, out); code != ExitFailed || r.severity(sign.RuleUnsigned) != "error" {
		t.Fatalf("verify --key of an unsigned index: exit %d\n%s", code, out)
	}
	if _, errOut, code := run(t, "promote", src, reg.Host()+"/release/app:0", "--key", pub); code != ExitFailed || distHead(t, reg, reg.Host()+"/release/app:0") != "" {
		t.Fatalf("promote of an unsigned index: exit %d, want 1 and no tag\n%s", code, errOut)
	}

	// --referrers refuses before writing anything: there is no referrers API.
	if _, errOut, code := run(t, "sign", src, "--key", key, "--referrers"); code != ExitError || !strings.Contains(errOut, registry.ErrReferrersUnsupported.Error()) {
		t.Errorf("sign --referrers: exit %d, %s", code, errOut)
	}
	sigTag := func(r *disttest.Registry, repo, d string) string {
		return r.Host() + "/" + repo + ":" + strings.Replace(d, ":", "-", 1) + ".sig"
	}
	if distHead(t, reg, sigTag(reg, "ci/app", digest)) != "" {
		t.Fatal("sign --referrers wrote a signature")
	}

	out, errOut, code := run(t, "sign", src, "--key", key, "--attestations")
	distNoSecret(t, "sign", reg.User(), []string{reg.Password(), "s3cret"}, out, errOut)
	if code != 0 || strings.Count(out, "signed ") != 1+len(im.Manifests) {
		t.Fatalf("sign --attestations: exit %d\n%s%s", code, out, errOut)
	}
	for _, d := range append([]string{digest}, im.Manifests[0].Digest.String()) {
		if distHead(t, reg, sigTag(reg, "ci/app", d)) == "" {
			t.Errorf("no signature tag for %s", d)
		}
	}
	out, errOut, code = run(t, "verify", src, "--key", pub, "-o", "json")
	if r := decodeReport(t, out); code != 0 || !*r.Passed || r.severity(sign.RuleUnsigned) != "" || r.severity(sign.RuleBadSignature) != "" {
		t.Fatalf("verify --key of the signed index: exit %d\n%s%s", code, out, errOut)
	}

	for _, dst := range []struct {
		name string
		reg  *disttest.Registry
	}{{"same registry", reg}, {"other registry", prod}} {
		t.Run(dst.name, func(t *testing.T) {
			to := dst.reg.Host() + "/release/app:1.0"
			out, errOut, code := run(t, "promote", src, to, "--key", pub)
			distNoSecret(t, "promote", reg.User(), []string{reg.Password(), prod.Password()}, out, errOut)
			if code != 0 || !strings.Contains(out, "promoted") {
				t.Fatalf("promote: exit %d\n%s%s", code, out, errOut)
			}
			if got := distHead(t, dst.reg, to); got != digest {
				t.Fatalf("release/app:1.0 is at %q, want %s", got, digest)
			}
			if distHead(t, dst.reg, sigTag(dst.reg, "release/app", digest)) == "" {
				t.Error("the signature tag was not promoted")
			}
			if out, errOut, code := run(t, "verify", to, "--key", pub); code != 0 {
				t.Fatalf("verify --key of the promoted index: exit %d\n%s%s", code, out, errOut)
			}
			if out, _, code := run(t, "promote", src, to, "--key", pub); code != 0 || !strings.Contains(out, "already points") {
				t.Errorf("promote again: exit %d\n%s", code, out)
			}
		})
	}
	other := push(t, reg, "ci/other:1", index(t, regtest.Entry{Image: regtest.Must(regtest.LinuxImage("arm64"))(t)}))
	if _, errOut, code := run(t, "promote", other, prod.Host()+"/release/app:1.0"); code != ExitError || !strings.Contains(errOut, registry.ErrTagExists.Error()) {
		t.Errorf("promote onto an existing tag: exit %d, %s", code, errOut)
	}
	if got := distHead(t, prod, prod.Host()+"/release/app:1.0"); got != digest {
		t.Errorf("the release tag moved to %s", got)
	}
}

// TestDistWrongPassword: with a wrong password in the Docker config, or
// no credentials at all, every command exits 2, names the refusal, writes
// nothing and prints no secret, not even with -v.
func TestDistWrongPassword(t *testing.T) {
	relFastRetries(t)
	reg := disttest.New(t, disttest.Options{})
	h := func(s string) string { return reg.Host() + "/" + s }
	app := rebaseFixture(t, reg)
	moveBases(t, reg, winFeb)
	srcs := indexFixture(t, reg)
	prefix := filepath.Join(t.TempDir(), "k")
	t.Setenv("COSIGN_PASSWORD", "s3cret")
	if out, errOut, code := run(t, "keygen", "--output-key-prefix", prefix); code != 0 {
		t.Fatalf("keygen: exit %d\n%s%s", code, out, errOut)
	}
	appDigest := distHead(t, reg, app)

	commands := []struct {
		name    string
		args    []string
		written string // a tag the command would write, absent afterwards
	}{
		{"verify", []string{"verify", app}, ""},
		{"resolve", []string{"resolve", app, "--platform", "linux/amd64"}, ""},
		{"inspect", []string{"inspect", app}, ""},
		{"bases", []string{"bases", app}, ""},
		{"index create", append([]string{"index", "create", "-t", h("new/app:1")}, srcs...), h("new/app:1")},
		{"rebase", []string{"rebase", app, "-t", h("app:2")}, h("app:2")},
		{"sign", []string{"sign", app, "--key", prefix + ".key"}, h("app:" + strings.Replace(appDigest, ":", "-", 1) + ".sig")},
		{"verify --key", []string{"verify", app, "--key", prefix + ".pub"}, ""},
		{"promote", []string{"promote", app, h("release/app:1")}, h("release/app:1")},
	}
	wrong := "wrong-" + reg.Password()[:8]
	for _, creds := range []struct {
		name, user, password string
	}{{"wrong password", reg.User(), wrong}, {"unknown user", "nobody", reg.Password()}} {
		t.Run(creds.name, func(t *testing.T) {
			disttest.SetDockerConfig(t, reg.Host(), creds.user, creds.password)
			for _, c := range commands {
				out, errOut, code := run(t, append(c.args, "-v")...) // the debug log too
				distNoSecret(t, c.name, creds.user, []string{reg.Password(), wrong}, out, errOut)
				if code != ExitError || !strings.Contains("\n"+errOut, "\nimgctl: ") ||
					!strings.Contains(errOut, "401") && !strings.Contains(errOut, "UNAUTHORIZED") {
					t.Errorf("%s: exit %d, want 2 naming the 401\nstdout:\n%s\nstderr:\n%s", c.name, code, out, errOut)
				}
				if c.written != "" && distHead(t, reg, c.written) != "" {
					t.Errorf("%s: %s was written", c.name, c.written)
				}
			}
		})
	}
	t.Run("no credentials", func(t *testing.T) {
		t.Setenv("DOCKER_CONFIG", t.TempDir())
		out, errOut, code := run(t, "index", "create", "-t", h("new/app:2"), srcs[0])
		if code != ExitError || !strings.Contains(errOut, "401") && !strings.Contains(errOut, "UNAUTHORIZED") {
			t.Errorf("index create: exit %d\n%s%s", code, out, errOut)
		}
		if distHead(t, reg, h("new/app:2")) != "" {
			t.Error("new/app:2 was written")
		}
	})
}

// TestDistStoppedMidCommand stops the registry when a command's first
// manifest PUT arrives (after its blobs went in): the command exits 2 naming
// the broken connection and prints nothing about the target, the target tag
// is absent once the registry is back, and a re-run publishes the digest it
// prints.
func TestDistStoppedMidCommand(t *testing.T) {
	relFastRetries(t)
	for _, tc := range []struct {
		name string
		// setup pushes the fixture and returns the command and the tag it
		// writes.
		setup func(t *testing.T, reg *disttest.Registry) (args []string, target string)
		// digest is what the target must hold after a clean re-run, read
		// from the re-run's stdout.
		digest func(stdout string) string
	}{
		{"index create", func(t *testing.T, reg *disttest.Registry) ([]string, string) {
			target := reg.Host() + "/stop/app:1"
			return append([]string{"index", "create", "-t", target}, indexFixture(t, reg)...), target
		}, firstLine},
		{"rebase", func(t *testing.T, reg *disttest.Registry) ([]string, string) {
			app := rebaseFixture(t, reg)
			moveBases(t, reg, winFeb)
			target := reg.Host() + "/app:2"
			return []string{"rebase", app, "-t", target}, target
		}, firstLine},
		{"promote", func(t *testing.T, reg *disttest.Registry) ([]string, string) {
			src := push(t, reg, "ci/app:1", regtest.Must(regtest.MultiOSIndex())(t))
			target := reg.Host() + "/release/app:1"
			return []string{"promote", src, target}, target
		}, func(s string) string { // "promoted SRC@DIGEST to DST (...)"
			_, rest, _ := strings.Cut(s, "promoted ")
			_, rest, _ = strings.Cut(rest, "@")
			d, _, _ := strings.Cut(rest, " ")
			return d
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := disttest.New(t, disttest.Options{})
			args, target := tc.setup(t, reg)
			repoPath := "/v2/" + strings.TrimPrefix(target[:strings.LastIndex(target, ":")], reg.Host()+"/") + "/manifests/"
			fired := reg.StopOn(func(req *http.Request) bool {
				return req.Method == http.MethodPut && strings.HasPrefix(req.URL.Path, repoPath)
			})
			out, errOut, code := run(t, args...)
			if !fired() {
				t.Fatalf("the registry was not stopped: exit %d\n%s%s", code, out, errOut)
			}
			if code != ExitError || !strings.HasPrefix(errOut, "imgctl: ") ||
				!relContainsAny(errOut, []string{"connection refused", "EOF", "connection reset", "server closed idle connection"}) {
				t.Errorf("exit %d, want 2 naming the broken connection\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			distNoSecret(t, tc.name, reg.User(), []string{reg.Password()}, out, errOut)
			// No claim that the target holds anything: promote may print
			// the verify report of the source, nothing about the tag.
			if strings.Contains(out, target) || strings.Contains(out, "promoted") {
				t.Errorf("stdout speaks of the target, which was not written:\n%s", out)
			}

			reg.SetMiddleware(nil)
			if err := reg.Restart(); err != nil {
				t.Fatal(err)
			}
			if got := distHead(t, reg, target); got != "" {
				t.Fatalf("%s exists after the stop, at %s", target, got)
			}
			out, errOut, code = run(t, args...)
			if code != 0 {
				t.Fatalf("re-run: exit %d\n%s%s", code, out, errOut)
			}
			if want, got := tc.digest(out), distHead(t, reg, target); !strings.HasPrefix(want, "sha256:") || got != want {
				t.Errorf("re-run: %s is at %q, the command printed %q", target, got, want)
			}
		})
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
