package cli

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// indexFixture pushes linux/amd64, linux/arm64 and both LTSC Windows images
// as single images to src:* and returns their references.
func indexFixture(t *testing.T, reg registryHost) []string {
	t.Helper()
	return []string{
		push(t, reg, "src:w22", regtest.Must(regtest.WindowsImage(regtest.OSVersionLTSC2022))(t)),
		push(t, reg, "src:amd64", regtest.Must(regtest.LinuxImage("amd64"))(t)),
		push(t, reg, "src:w25", regtest.Must(regtest.WindowsImage(regtest.OSVersionLTSC2025))(t)),
		push(t, reg, "src:arm64", regtest.Must(regtest.LinuxImage("arm64"))(t)),
	}
}

func TestIndexCreate(t *testing.T) {
	reg := regtest.New(t)
	srcs := indexFixture(t, reg)
	target := reg.Host() + "/app:1"
	reg.ResetStats()
	out, errOut, code := run(t, append([]string{"index", "create", "-v", "-t", target, "--annotation", "org.opencontainers.image.version=1.0"}, srcs...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	// Blobs are mounted with one POST each: HEADs only for the tag check,
	// the four children and the tag's read-back after the PUT, and no blob
	// through the client beyond the 4 configs.
	if st := reg.Stats(); st.Mounts == 0 || st.BlobBytesReceived != 0 || st.Head > 6 || st.Put != 5 {
		t.Errorf("registry traffic: %s", st)
	}
	digest, _, _ := strings.Cut(out, "\n")
	if !strings.HasPrefix(digest, "sha256:") || !strings.Contains(out, "PASSED "+target+"@"+digest) {
		t.Errorf("want the digest, then a passed verify report:\n%s", out)
	}
	if !strings.Contains(errOut, "index create: ") || !strings.Contains(errOut, "registry requests") {
		t.Errorf("--verbose shows no request count:\n%s", errOut)
	}
	out, _, _ = run(t, "inspect", target)
	for _, want := range []string{regtest.OSVersionLTSC2025 + "  ltsc2025", regtest.OSVersionLTSC2022 + "  ltsc2022", "linux/arm64/v8"} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect lacks %q:\n%s", want, out)
		}
	}
	raw, _, _ := run(t, "inspect", target, "-o", "json")
	im := regtest.Must(v1.ParseIndexManifest(strings.NewReader(raw)))(t)
	if im.Annotations["org.opencontainers.image.version"] != "1.0" || im.Manifests[2].Platform.OSVersion != regtest.OSVersionLTSC2025 {
		t.Errorf("index %s", raw)
	}
	// The tag is immutable, unless --force.
	if _, errOut, code := run(t, "index", "create", "-t", target, srcs[0]); code != 2 || !strings.Contains(errOut, "refusing to overwrite") {
		t.Errorf("existing tag: exit %d %s", code, errOut)
	}
	if out, errOut, code := run(t, "index", "create", "--force", "--windows", "ltsc2022", "-t", target, srcs[0]); code != 0 {
		t.Errorf("--force: exit %d %s %s", code, out, errOut)
	}
}

func TestIndexCreateJSONAndVerify(t *testing.T) {
	reg := regtest.New(t)
	srcs := indexFixture(t, reg)
	// Only ltsc2025: the default targets include ltsc2022, so verify fails.
	out, _, code := run(t, "index", "create", "-o", "json", "-t", reg.Host()+"/app:1", srcs[1], srcs[2])
	if code != 1 {
		t.Fatalf("exit %d, want 1 (verify fails):\n%s", code, out)
	}
	var got struct {
		Ref, Digest, MediaType string
		Manifests, Requests    int
		Verify                 struct{ Passed bool }
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got.Ref != reg.Host()+"/app:1" || !strings.HasPrefix(got.Digest, "sha256:") || got.Manifests != 2 ||
		got.MediaType != "application/vnd.oci.image.index.v1+json" || got.Requests == 0 || got.Verify.Passed {
		t.Errorf("json %+v", got)
	}
	if _, errOut, code := run(t, "index", "create", "--no-verify", "-t", reg.Host()+"/app:2", srcs[1], srcs[2]); code != 0 {
		t.Errorf("--no-verify: exit %d %s", code, errOut)
	}
	if _, errOut, code := run(t, "index", "create", "--windows", "ltsc2025", "-t", reg.Host()+"/app:3", srcs[1], srcs[2]); code != 0 {
		t.Errorf("--windows ltsc2025: exit %d %s", code, errOut)
	}
}

func TestIndexCreateDuplicatesAndDryRun(t *testing.T) {
	reg := regtest.New(t)
	srcs := indexFixture(t, reg)
	newer := push(t, reg, "src:w22new", regtest.Must(regtest.WindowsImage("10.0.20348.9999"))(t))
	target := reg.Host() + "/app:1"
	args := append([]string{"index", "create", "-t", target}, append(srcs, newer)...)
	if _, errOut, code := run(t, args...); code != 2 || !strings.Contains(errOut, "duplicate platform") || !strings.Contains(errOut, "use --prefer newest") {
		t.Errorf("duplicate: exit %d %s", code, errOut)
	}
	reg.ResetStats()
	out, errOut, code := run(t, append(args, "--prefer", "newest", "--dry-run")...)
	if code != 0 || !strings.Contains(errOut, "note: dropped windows/amd64:"+regtest.OSVersionLTSC2022) {
		t.Fatalf("dry run: exit %d %s", code, errOut)
	}
	if st := reg.Stats(); st.Put != 0 || st.Post != 0 {
		t.Errorf("dry run wrote: %s", st)
	}
	im := regtest.Must(v1.ParseIndexManifest(strings.NewReader(out)))(t)
	if len(im.Manifests) != 4 || im.Manifests[3].Platform.OSVersion != "10.0.20348.9999" {
		t.Errorf("dry run index %s", out)
	}
	if out, _, code := run(t, append(args, "--prefer", "oldest")...); code != 2 {
		t.Errorf("--prefer oldest: exit %d %s", code, out)
	}
}

func TestIndexRemove(t *testing.T) {
	reg := regtest.New(t)
	src := push(t, reg, "app:1", regtest.Must(regtest.MultiOSIndex())(t))
	target := reg.Host() + "/app:1-no2022"
	out, errOut, code := run(t, "index", "remove", "-t", target, "--platform", "windows/amd64:10.0.20348", "--windows", "ltsc2025", src)
	if code != 0 || !strings.Contains(errOut, "note: removed windows/amd64:"+regtest.OSVersionLTSC2022) || !strings.Contains(errOut, "attestation") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	out, _, _ = run(t, "inspect", target)
	if strings.Contains(out, "ltsc2022") || !strings.Contains(out, "ltsc2025") || strings.Count(out, "attestation") != 3 {
		t.Errorf("inspect after remove:\n%s", out)
	}
	if _, errOut, code := run(t, "index", "remove", "-t", reg.Host()+"/app:x", "--platform", "linux/s390x", src); code != 2 || !strings.Contains(errOut, "no entry matches") {
		t.Errorf("nothing matched: exit %d %s", code, errOut)
	}
	if _, _, code := run(t, "index", "remove", "-t", reg.Host()+"/app:x", src); code != 2 {
		t.Errorf("no --platform: exit %d", code)
	}
}

// TestIndexCreateHalfway: a blob of the second source fails across
// registries; nothing is published, and a re-run after the fault publishes
// the digest the dry run announced. The fault is a 403, which is not retried,
// so the test does not wait out the CLI's backoff (index/ tests a 500).
func TestIndexCreateHalfway(t *testing.T) {
	src, dst := regtest.New(t), regtest.New(t)
	win := regtest.Must(regtest.WindowsImage(regtest.OSVersionLTSC2025))(t)
	srcs := []string{push(t, src, "l:1", regtest.Must(regtest.LinuxImage("amd64"))(t)), push(t, src, "w:1", win)}
	ls := regtest.Must(win.Layers())(t)
	bad := regtest.Must(ls[len(ls)-1].Digest())(t).String()
	src.SetMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, bad) {
				http.Error(w, "injected", http.StatusForbidden)
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	target := dst.Host() + "/app:1"
	args := append([]string{"index", "create", "--no-verify", "-t", target}, srcs...)
	plan, _, code := run(t, append(args, "--dry-run")...)
	if code != 0 {
		t.Fatal(code)
	}
	if _, _, code := run(t, args...); code != 2 {
		t.Fatalf("failing source: exit %d", code)
	}
	if _, _, code := run(t, "inspect", target); code != 2 {
		t.Fatal("a failed merge left the tag")
	}
	src.SetMiddleware(nil)
	out, errOut, code := run(t, args...)
	want := regtest.Must(v1.ParseIndexManifest(strings.NewReader(plan)))(t)
	if code != 0 || len(want.Manifests) != 2 || strings.TrimSpace(out) != digestOfRaw(t, plan) {
		t.Errorf("re-run: exit %d %q %s, want %s", code, out, errOut, digestOfRaw(t, plan))
	}
}

func digestOfRaw(t *testing.T, s string) string {
	t.Helper()
	h, _, err := v1.SHA256(strings.NewReader(strings.TrimSuffix(s, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	return h.String()
}
