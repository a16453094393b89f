package rebase

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/snapshot"
)

var ctx = context.Background()

// Windows versions of the fixtures: the January and February revisions of
// one Windows Server 2025 build, and a later build.
const (
	winOld   = "10.0.26100.33438"
	winNew   = "10.0.26100.33674"
	winBuild = "10.0.26200.7019"
)

// testOptions retries after a millisecond so that fault tests fail fast.
func testOptions() Options {
	return Options{Registry: registry.New(registry.WithRetryBase(time.Millisecond))}
}

// fixture is a registry with published bases and an app index built on
// them, as `imgctl build` publishes it: every manifest names its base in
// the base.name and base.digest annotations.
type fixture struct {
	reg                *regtest.Registry
	nanoserver, distro string // base tags
	app                name.Reference
	win, amd, arm      v1.Image // the app variants
	winBase, linBase   map[string]v1.Image
}

// newFixture publishes base/nanoserver:ltsc2025 (one image of winOld),
// base/distroless:latest (an index of linux amd64 and arm64) and app:1, an
// index of the three app variants with an attestation each. The Windows
// variant records its base's manifest digest, the Linux ones the base
// index's digest (OCI allows either).
func newFixture(t *testing.T) *fixture {
	t.Helper()
	reg := regtest.New(t)
	f := &fixture{reg: reg, nanoserver: reg.Host() + "/base/nanoserver:ltsc2025", distro: reg.Host() + "/base/distroless:latest"}
	f.winBase = map[string]v1.Image{"amd64": regtest.Must(regtest.WindowsBaseImage(winOld))(t)}
	f.linBase = linuxBases(t, "distroless-1")
	pushIndex(t, reg, "base/nanoserver:ltsc2025", f.winBase["amd64"])
	distroIdx := pushIndex(t, reg, "base/distroless:latest", f.linBase["amd64"], f.linBase["arm64"])
	ann := func(base string, d v1.Hash) regtest.ImageOption {
		return regtest.WithAnnotations(map[string]string{snapshot.AnnotationBaseName: base, snapshot.AnnotationBaseDigest: d.String()})
	}
	f.win = regtest.Must(regtest.WindowsImage("", regtest.WithBase(f.winBase["amd64"]), regtest.WithSeed("app"),
		ann(f.nanoserver, digest(t, f.winBase["amd64"]))))(t)
	f.amd = regtest.Must(regtest.LinuxImage("amd64", regtest.WithBase(f.linBase["amd64"]), regtest.WithSeed("app"), ann(f.distro, distroIdx)))(t)
	f.arm = regtest.Must(regtest.LinuxImage("arm64", regtest.WithBase(f.linBase["arm64"]), regtest.WithSeed("app"), ann(f.distro, distroIdx)))(t)
	f.app = pushAppIndex(t, reg, "app:1", f.amd, f.arm, f.win)
	return f
}

// moveBases publishes new images under the base tags: the next revision of
// the Windows build and a new Linux base.
func (f *fixture) moveBases(t *testing.T, winVersion string) {
	t.Helper()
	pushIndex(t, f.reg, "base/nanoserver:ltsc2025", regtest.Must(regtest.WindowsBaseImage(winVersion))(t))
	lin := linuxBases(t, "distroless-2")
	pushIndex(t, f.reg, "base/distroless:latest", lin["amd64"], lin["arm64"])
}

func linuxBases(t *testing.T, seed string) map[string]v1.Image {
	t.Helper()
	return map[string]v1.Image{
		"amd64": regtest.Must(regtest.LinuxImage("amd64", regtest.WithSeed(seed)))(t),
		"arm64": regtest.Must(regtest.LinuxImage("arm64", regtest.WithSeed(seed)))(t),
	}
}

func pushIndex(t *testing.T, reg *regtest.Registry, tag string, imgs ...v1.Image) v1.Hash {
	t.Helper()
	var es []regtest.Entry
	for _, img := range imgs {
		es = append(es, regtest.Entry{Image: img})
	}
	_, d, err := reg.PushTag(tag, regtest.Must(regtest.Index(es...))(t))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// pushAppIndex pushes an index of imgs followed by an attestation of each.
func pushAppIndex(t *testing.T, reg *regtest.Registry, tag string, imgs ...v1.Image) name.Reference {
	t.Helper()
	var es, atts []regtest.Entry
	for _, img := range imgs {
		es = append(es, regtest.Entry{Image: img})
		atts = append(atts, regtest.Must(regtest.AttestationEntry(img))(t))
	}
	ref, _, err := reg.PushTag(tag, regtest.Must(regtest.Index(append(es, atts...)...))(t))
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

func digest(t *testing.T, x interface{ Digest() (v1.Hash, error) }) v1.Hash {
	t.Helper()
	return regtest.Must(x.Digest())(t)
}

// rebaseApp rebases the fixture's app:1 into app:2 with o, imgctl's
// version set, and returns the result and the target.
func rebaseApp(t *testing.T, f *fixture, o Options) (*Result, name.Tag) {
	t.Helper()
	o.Version = "v1.2.3-test"
	target := tag(t, f.reg, "app:2")
	res, err := Rebase(ctx, f.app, target, o)
	if err != nil {
		t.Fatal(err)
	}
	return res, target
}

func tag(t *testing.T, reg *regtest.Registry, s string) name.Tag {
	t.Helper()
	return reg.MustRef(t, s).(name.Tag)
}

// blobLog records which blobs clients read and wrote, by digest.
type blobLog struct {
	mu            sync.Mutex
	read, written []string
}

func (b *blobLog) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		b.mu.Lock()
		switch {
		case r.Method == http.MethodGet && strings.Contains(p, "/blobs/sha256:"):
			b.read = append(b.read, p[strings.LastIndex(p, "/")+1:])
		case strings.Contains(p, "/blobs/uploads") && r.URL.Query().Get("digest") != "":
			b.written = append(b.written, r.URL.Query().Get("digest"))
		}
		b.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

// layerDigests returns the digests of the layers of imgs.
func layerDigests(t *testing.T, imgs ...v1.Image) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, img := range imgs {
		for _, l := range regtest.Must(img.Manifest())(t).Layers {
			out[l.Digest.String()] = true
		}
	}
	return out
}

// fetchIndex reads a pushed index.
func fetchIndex(t *testing.T, ref name.Reference) (v1.ImageIndex, *v1.IndexManifest) {
	t.Helper()
	idx := regtest.Must(remote.Index(ref))(t)
	return idx, regtest.Must(idx.IndexManifest())(t)
}

// sameJSON compares descriptors as they are written into a manifest.
func sameJSON(t *testing.T, a, b []v1.Descriptor) bool {
	t.Helper()
	return string(regtest.Must(json.Marshal(a))(t)) == string(regtest.Must(json.Marshal(b))(t))
}

func countPrefix(ss []string, prefix string) int { return count(ss, prefix, strings.HasPrefix) }

func countContains(ss []string, sub string) int { return count(ss, sub, strings.Contains) }

// count returns how many of ss match s.
func count(ss []string, s string, match func(string, string) bool) int {
	n := 0
	for _, x := range ss {
		if match(x, s) {
			n++
		}
	}
	return n
}

func formatDesc(d v1.Descriptor) string {
	if d.Platform == nil {
		return "-"
	}
	s := d.Platform.OS + "/" + d.Platform.Architecture
	if d.Platform.Variant != "" {
		s += "/" + d.Platform.Variant
	}
	if d.Platform.OSVersion != "" {
		s += ":" + d.Platform.OSVersion
	}
	return s
}
