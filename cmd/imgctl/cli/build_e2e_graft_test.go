package cli

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/docker/cli/cli/config"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/imgctl/imgctl/build/skeleton"
	"github.com/imgctl/imgctl/internal/testing/buildtest"
	"github.com/imgctl/imgctl/internal/testing/disttest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
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
	buildOn := func(addr, tag string, args ...string) string {
		t.Helper()
		gets.reset()
		out, stderr, code := run(t, append([]string{"build", "-v", "--builder", addr, "--progress", "plain",
			"--platform", "windows/amd64", "--windows", "ltsc2025", "--windows-base", "ltsc2025=" + baseRef, "-t", tag, ctxDir}, args...)...)
		if code != 0 {
			t.Fatalf("build exit %d\nstdout:\n%s\nstderr:\n%s", code, out, tail(stderr, 60))
		}
		if !strings.Contains(stderr, "msg=grafting") || strings.Contains(stderr, "plain path") {
			t.Errorf("the variant was not grafted:\n%s", tail(stderr, 40))
		}
		return stderr
	}
	build := func(tag string) string { t.Helper(); return buildOn(daemon.Addr, tag) }
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
	// A fresh runner: an empty local cache and a builder that never
	// pulled anything. Each gets its own.
	runner := func(t *testing.T) string {
		t.Setenv("XDG_CACHE_HOME", t.TempDir())
		return buildtest.New(t, buildtest.Options{InsecureRegistries: []string{src.Host(), dst.Host()}}).Addr
	}
	baseGets := func() int { return gets.builder[layer.Digest.String()] + gets.imgctl[layer.Digest.String()] }
	entry := dst.Host() + "/app/cross:" + skeleton.Tag(layer.Digest)
	t.Run("a fresh runner reads the skeleton from the registry, not the base", func(t *testing.T) {
		stderr := buildOn(runner(t), dst.Host()+"/app/cross:3")
		if n := baseGets(); n != 0 {
			t.Errorf("%d GETs of the base layer; want none, the skeleton is in app/cross", n)
		}
		if strings.Contains(stderr, "note: skeleton cache") || !strings.Contains(stderr, `msg="placeholder from the skeleton cache"`) {
			t.Errorf("want the placeholder from the registry's cache, without a note:\n%s", tail(stderr, 20))
		}
	})
	t.Run("a poisoned entry is ignored, made again and replaced", func(t *testing.T) {
		good := skeletonEntryLayer(t, dst, entry)
		poison := regtest.TarGz(t, [2]string{"Files/", ""}, [2]string{"evil/", ""}, [2]string{"evil/run.cmd", ""})
		// Every entry of the layer: the whole skeleton and the
		// placeholders pruned for this stage.
		repo := regtest.Must(name.NewRepository(dst.Host()+"/app/cross", name.Insecure))(t)
		tags := regtest.Must(remote.List(repo, dst.Remote()...))(t)
		var poisoned int
		for _, tg := range tags {
			if strings.HasPrefix(tg, skeleton.Tag(layer.Digest)) {
				putSkeletonEntry(t, dst, repo.Tag(tg).String(), layer.Digest, poison)
				poisoned++
			}
		}
		if poisoned < 2 {
			t.Fatalf("%d entries of the layer in app/cross (%v), want the whole skeleton and a pruned placeholder", poisoned, tags)
		}
		stderr := buildOn(runner(t), dst.Host()+"/app/cross:4")
		if !strings.Contains(stderr, "ignoring the entry") || !strings.Contains(stderr, "outside the Windows layout") {
			t.Errorf("no note of the poisoned entry:\n%s", tail(stderr, 30))
		}
		if n := gets.imgctl[layer.Digest.String()]; n != 1 {
			t.Errorf("imgctl read the base layer %d times, want once (the skeleton made again)", n)
		}
		if got := skeletonEntryLayer(t, dst, entry); got != good {
			t.Errorf("the entry holds %s, want the skeleton %s made again", got, good)
		}
		if out, stderr, code := run(t, "verify", "--layers", "--windows", "ltsc2025", dst.Host()+"/app/cross:4"); code != 0 {
			t.Errorf("verify --layers exit %d:\n%s\n%s", code, out, stderr)
		}
	})
	t.Run("--skeleton-cache the build may not write is not read", func(t *testing.T) {
		other, err := disttest.Start(disttest.Options{}) // no Login: imgctl has no credentials for it
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(other.Close)
		cacheRepo := other.Host() + "/team/skeletons"
		// The entry is there and valid, so only the trust rule keeps it out.
		copyEntry(t, dst, entry, other, cacheRepo+":"+skeleton.Tag(layer.Digest))
		stderr := buildOn(runner(t), dst.Host()+"/app/cross:5", "--skeleton-cache", cacheRepo)
		if !strings.Contains(stderr, "skeleton cache "+cacheRepo+": this build may not write it") {
			t.Errorf("no note of the cache refused:\n%s", tail(stderr, 30))
		}
		if n := gets.imgctl[layer.Digest.String()]; n != 1 {
			t.Errorf("imgctl read the base layer %d times, want once: the untrusted entry must not be used", n)
		}
	})
	t.Run("--skeleton-cache elsewhere serves the next runner", func(t *testing.T) {
		cacheRepo := dst.Host() + "/team/skeletons"
		buildOn(runner(t), dst.Host()+"/app/cross:6", "--skeleton-cache", cacheRepo)
		if n := gets.imgctl[layer.Digest.String()]; n != 1 {
			t.Errorf("imgctl read the base layer %d times, want once: the named cache was empty", n)
		}
		if skeletonEntryLayer(t, dst, cacheRepo+":"+skeleton.Tag(layer.Digest)) == "" {
			t.Fatal("no entry filed in the named cache")
		}
		buildOn(runner(t), dst.Host()+"/app/cross:7", "--skeleton-cache", cacheRepo)
		if n := baseGets(); n != 0 {
			t.Errorf("%d GETs of the base layer by a runner with the named cache", n)
		}
	})
}

// skeletonEntryLayer is the digest of the skeleton a skeleton cache entry
// (REPO:TAG on reg) holds, or "" when there is no entry.
func skeletonEntryLayer(t *testing.T, reg *disttest.Registry, entry string) string {
	t.Helper()
	desc, err := remote.Get(regtest.Must(name.ParseReference(entry, name.Insecure))(t), reg.Remote()...)
	if err != nil {
		return ""
	}
	m := regtest.Must(v1.ParseManifest(bytes.NewReader(desc.Manifest)))(t)
	if len(m.Layers) != 1 {
		t.Fatalf("entry %s has %d layers", entry, len(m.Layers))
	}
	return m.Layers[0].Digest.String()
}

// rawManifest is a manifest pushed with its exact bytes.
type rawManifest struct {
	raw []byte
	mt  types.MediaType
}

func (m rawManifest) RawManifest() ([]byte, error)        { return m.raw, nil }
func (m rawManifest) MediaType() (types.MediaType, error) { return m.mt, nil }

// putSkeletonEntry writes a skeleton cache entry at entry on reg, filed
// under base layer h, holding skel (a gzip tar), in the documented
// layout: what a writer of the cache could put there.
func putSkeletonEntry(t *testing.T, reg *disttest.Registry, entry string, h v1.Hash, skel []byte) {
	t.Helper()
	ref := regtest.Must(name.ParseReference(entry, name.Insecure))(t)
	layer := static.NewLayer(skel, types.OCILayer)
	cfg := static.NewLayer([]byte("{}"), "application/vnd.oci.empty.v1+json")
	for _, l := range []v1.Layer{layer, cfg} {
		if err := remote.WriteLayer(ref.Context(), l, reg.Remote()...); err != nil {
			t.Fatal(err)
		}
	}
	desc := func(l v1.Layer) map[string]any {
		return map[string]any{"mediaType": regtest.Must(l.MediaType())(t), "digest": regtest.Must(l.Digest())(t).String(), "size": regtest.Must(l.Size())(t)}
	}
	raw := regtest.Must(json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": types.OCIManifestSchema1, "artifactType": skeleton.ArtifactType,
		"config": desc(cfg), "layers": []any{desc(layer)},
		"annotations": map[string]string{skeleton.AnnotationLayer: h.String(), skeleton.AnnotationFormat: skeleton.Format},
	}))(t)
	if err := remote.Put(ref, rawManifest{raw, types.OCIManifestSchema1}, reg.Remote()...); err != nil {
		t.Fatal(err)
	}
}

// copyEntry copies the skeleton cache entry at src on from to dst on to.
func copyEntry(t *testing.T, from *disttest.Registry, src string, to *disttest.Registry, dst string) {
	t.Helper()
	ref := regtest.Must(name.ParseReference(src, name.Insecure))(t)
	desc, err := remote.Get(ref, from.Remote()...)
	if err != nil {
		t.Fatal(err)
	}
	m := regtest.Must(v1.ParseManifest(bytes.NewReader(desc.Manifest)))(t)
	dref := regtest.Must(name.ParseReference(dst, name.Insecure))(t)
	for _, d := range append([]v1.Descriptor{m.Config}, m.Layers...) {
		l, err := remote.Layer(ref.Context().Digest(d.Digest.String()), from.Remote()...)
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.WriteLayer(dref.Context(), l, to.Remote()...); err != nil {
			t.Fatal(err)
		}
	}
	if err := remote.Put(dref, rawManifest{desc.Manifest, desc.MediaType}, to.Remote()...); err != nil {
		t.Fatal(err)
	}
}
