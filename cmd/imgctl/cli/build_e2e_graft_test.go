package cli

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/docker/cli/cli/config"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/internal/buildtest"
	"github.com/imgctl/imgctl/internal/disttest"
	"github.com/imgctl/imgctl/internal/regtest"
)

// graftDockerfile is a Windows stage with a plain COPY, which imgctl
// grafts onto its base without the builder fetching it.
const graftDockerfile = `ARG WINDOWS_BASE=mcr.microsoft.com/windows/nanoserver:ltsc2025
FROM ${WINDOWS_BASE}
COPY app.exe /app/app.exe
ENTRYPOINT ["C:\\app\\app.exe"]
`

// layerGets counts the GETs of blobs by who sent them: BuildKit (its
// User-Agent) or imgctl.
type layerGets struct {
	mu              sync.Mutex
	builder, imgctl map[string]int
}

func (g *layerGets) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/blobs/sha256:") {
			d := req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:]
			g.mu.Lock()
			if strings.HasPrefix(req.UserAgent(), "buildkit/") {
				g.builder[d]++
			} else {
				g.imgctl[d]++
			}
			g.mu.Unlock()
		}
		next.ServeHTTP(w, req)
	})
}

func (g *layerGets) reset() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.builder, g.imgctl = map[string]int{}, map[string]int{}
}

// uniqueWindowsBase is an ltsc2025 Windows base whose layer carries n
// random bytes (hex, so about n of compressed layer): content no cache
// anywhere holds. It returns the seed, too.
func uniqueWindowsBase(t *testing.T, n int) (v1.Image, []byte) {
	t.Helper()
	pad := make([]byte, n)
	if _, err := rand.Read(pad); err != nil {
		t.Fatal(err)
	}
	win, err := regtest.WindowsBaseImage(regtest.OSVersionLTSC2025, regtest.WithSeed(hex.EncodeToString(pad)))
	if err != nil {
		t.Fatal(err)
	}
	return win, pad
}

// TestBuildGraftAcrossRegistries grafts a Windows variant whose base sits
// in another registry than the tag (the tag on the CNCF distribution
// registry with htpasswd auth): the builder fetches no base layer; imgctl
// reads the base layer once, streaming it into the tag's repository while
// it makes the layer's skeleton, so the layer crosses once; a second build
// reads nothing of the base (the skeleton is cached, the target holds the
// layer); and verify --layers accepts the result.
func TestBuildGraftAcrossRegistries(t *testing.T) {
	gets := &layerGets{}
	gets.reset()
	src := regtest.New(t, regtest.WithMiddleware(gets.middleware))
	dst := disttest.New(t, disttest.Options{})
	dst.Login(t)
	prevDir := config.Dir()
	config.SetDir(os.Getenv(config.EnvOverrideConfigDir))
	t.Cleanup(func() { config.SetDir(prevDir) })
	t.Setenv("BUILDKIT_HOST", "")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())

	win, _ := uniqueWindowsBase(t, 256<<10)
	if _, err := regtest.Push(src.MustRef(t, "bases/nanoserver:ltsc2025"), win); err != nil {
		t.Fatal(err)
	}
	baseRef := src.Host() + "/bases/nanoserver:ltsc2025"
	layer := manifestLayers(t, win)[0]
	ctxDir := t.TempDir()
	writeFile(t, filepath.Join(ctxDir, "app.exe"), "MZ graft "+t.Name())
	writeFile(t, filepath.Join(ctxDir, "Dockerfile"), graftDockerfile)
	daemon := buildtest.New(t, buildtest.Options{InsecureRegistries: []string{src.Host(), dst.Host()}})

	up := &uploadBytes{prefix: "/v2/app/cross/blobs/uploads/", bySession: map[string]int64{}, byDigest: map[string]int64{}}
	dst.SetMiddleware(up.middleware)
	build := func(tag string) string {
		t.Helper()
		gets.reset()
		out, stderr, code := run(t, "build", "-v", "--builder", daemon.Addr, "--progress", "plain",
			"--platform", "windows/amd64", "--windows", "ltsc2025", "--windows-base", "ltsc2025="+baseRef, "-t", tag, ctxDir)
		if code != 0 {
			t.Fatalf("build exit %d\nstdout:\n%s\nstderr:\n%s", code, out, tail(stderr, 60))
		}
		if !strings.Contains(stderr, "msg=grafting") || strings.Contains(stderr, "plain path") {
			t.Errorf("the variant was not grafted:\n%s", tail(stderr, 40))
		}
		return stderr
	}
	tag := dst.Host() + "/app/cross:1"
	build(tag)
	t.Run("the builder fetches no base layer; imgctl reads it once", func(t *testing.T) {
		if n := gets.builder[layer.Digest.String()]; n != 0 {
			t.Errorf("the builder fetched the base layer %d times", n)
		}
		if n := gets.imgctl[layer.Digest.String()]; n != 1 {
			t.Errorf("imgctl fetched the base layer %d times, want 1 (the copy that makes the skeleton)", n)
		}
	})
	t.Run("the base layer crosses once", func(t *testing.T) {
		if n := up.byDigest[layer.Digest.String()]; n != layer.Size {
			t.Errorf("%d bytes of the base layer uploaded into app/cross, want its %d once", n, layer.Size)
		}
	})
	t.Run("the image lists the base layer, and verify --layers accepts it", func(t *testing.T) {
		ref, im := distIndex(t, dst, tag)
		var found bool
		for _, d := range im.Manifests {
			if d.Platform == nil || d.Platform.OS != "windows" {
				continue
			}
			found = true
			img, err := remote.Image(ref.Context().Digest(d.Digest.String()), dst.Remote()...)
			if err != nil {
				t.Fatal(err)
			}
			if got := manifestLayers(t, img); len(got) != 2 || got[0].Digest != layer.Digest {
				t.Errorf("layers %v: want the base's %s, then the app's", got, layer.Digest)
			}
		}
		if !found {
			t.Fatal("no Windows image in the index")
		}
		out, stderr, code := run(t, "verify", "--layers", "--windows", "ltsc2025", tag)
		if code != 0 {
			t.Errorf("verify --layers exit %d:\n%s\n%s", code, out, stderr)
		}
	})
	t.Run("a second build reads nothing of the base", func(t *testing.T) {
		up.mu.Lock()
		up.byDigest, up.total = map[string]int64{}, 0
		up.mu.Unlock()
		build(dst.Host() + "/app/cross:2")
		if n := gets.builder[layer.Digest.String()] + gets.imgctl[layer.Digest.String()]; n != 0 {
			t.Errorf("%d GETs of the base layer", n)
		}
		if n := up.byDigest[layer.Digest.String()]; n != 0 {
			t.Errorf("the base layer was uploaded again: %d bytes", n)
		}
	})
}
