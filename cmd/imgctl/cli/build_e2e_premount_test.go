package cli

import (
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	contentapi "github.com/containerd/containerd/api/services/content/v1"
	"github.com/docker/cli/cli/config"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/internal/testing/buildtest"
	"github.com/imgctl/imgctl/internal/testing/disttest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// premountDockerfile builds the Windows stage with a plain COPY, the path
// on which BuildKit pulls the base and then pushes its layers again (see
// build/content/premount.go).
const premountDockerfile = `ARG LINUX_BASE=gcr.io/distroless/static-debian12:nonroot
ARG WINDOWS_BASE=mcr.microsoft.com/windows/nanoserver:ltsc2025
FROM ${LINUX_BASE} AS final-linux
COPY app.exe /app/app.exe
FROM ${WINDOWS_BASE} AS final-windows
COPY app.exe /app/app.exe
ENTRYPOINT ["C:\\app\\app.exe"]
FROM final-${TARGETOS}
`

// uploadBytes counts the request body bytes of blob uploads into one
// repository, by the digest that each upload session was closed with.
type uploadBytes struct {
	prefix string // /v2/REPO/blobs/uploads/

	mu        sync.Mutex
	bySession map[string]int64 // upload path -> bytes so far
	byDigest  map[string]int64
	total     int64
}

func (u *uploadBytes) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if (req.Method != http.MethodPatch && req.Method != http.MethodPut) || !strings.HasPrefix(req.URL.Path, u.prefix) {
			next.ServeHTTP(w, req)
			return
		}
		body, err := io.ReadAll(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		req.Body = io.NopCloser(strings.NewReader(string(body)))
		u.mu.Lock()
		u.bySession[req.URL.Path] += int64(len(body))
		u.total += int64(len(body))
		if d := req.URL.Query().Get("digest"); req.Method == http.MethodPut && d != "" {
			u.byDigest[d] += u.bySession[req.URL.Path]
		}
		u.mu.Unlock()
		next.ServeHTTP(w, req)
	})
}

// TestBuildPremountDist builds a Windows and a Linux variant on BuildKit's
// plain path (--windows-plain: the default grafts the Windows variant
// without pulling its base, see build/graft/graft.go), each with a
// plain COPY onto a base that sits in another repository of the same CNCF
// distribution registry (blobs linked per repository, htpasswd auth), on a
// fresh buildkitd that has never pulled the bases (unique content). imgctl
// mounts every base layer into the target repository before the solve:
// exactly one mount POST per base layer, no byte of a base layer uploaded,
// and the pushed manifests list the base's layer digests unchanged.
func TestBuildPremountDist(t *testing.T) {
	reg := disttest.New(t, disttest.Options{})
	reg.Login(t)
	// The build session reads credentials through docker/cli's config.Dir,
	// which keeps the DOCKER_CONFIG of the first build in this process.
	prevDir := config.Dir()
	config.SetDir(os.Getenv(config.EnvOverrideConfigDir))
	t.Cleanup(func() { config.SetDir(prevDir) })
	t.Setenv("BUILDKIT_HOST", "")

	// Unique content, so that nothing cached anywhere helps; about 1 MB of
	// compressed Windows base layer.
	win, pad := uniqueWindowsBase(t, 1<<20)
	linux, linuxImages, err := regtest.LinuxIndex(regtest.WithSeed(t.Name() + hex.EncodeToString(pad[:16])))
	if err != nil {
		t.Fatal(err)
	}
	winRef, _, err := reg.PushTag("bases/nanoserver:ltsc2025", win)
	if err != nil {
		t.Fatal(err)
	}
	linuxRef, _, err := reg.PushTag("bases/linux:1", linux)
	if err != nil {
		t.Fatal(err)
	}
	winLayers := manifestLayers(t, win)
	amd64, err := linuxImages[0].Manifest()
	if err != nil {
		t.Fatal(err)
	}
	baseRepos := map[v1.Hash]string{}
	var baseLayers []v1.Descriptor
	for _, l := range winLayers {
		baseRepos[l.Digest] = "bases/nanoserver"
	}
	for _, l := range amd64.Layers {
		baseRepos[l.Digest] = "bases/linux"
	}
	baseLayers = append(append(baseLayers, winLayers...), amd64.Layers...)

	ctxDir := t.TempDir()
	writeFile(t, filepath.Join(ctxDir, "app.exe"), "MZ premount "+t.Name())
	writeFile(t, filepath.Join(ctxDir, "Dockerfile"), premountDockerfile)
	daemon := buildtest.New(t, buildtest.Options{InsecureRegistries: []string{reg.Host()}})

	tag := reg.Host() + "/app/premount:1"
	up := &uploadBytes{prefix: "/v2/app/premount/blobs/uploads/", bySession: map[string]int64{}, byDigest: map[string]int64{}}
	reg.SetMiddleware(up.middleware)
	reg.ResetRequests()
	out, stderr, code := run(t, "build", "-v", "--builder", daemon.Addr, "--progress", "plain", "--no-verify", "--windows-plain",
		"--platform", "linux/amd64,windows/amd64", "--windows", "ltsc2025", "--windows-base", "ltsc2025="+winRef.String(),
		"--build-arg", "LINUX_BASE="+linuxRef.String(), "-t", tag, ctxDir)
	reg.SetMiddleware(nil)
	if code != 0 {
		t.Fatalf("build exit %d\nstdout:\n%s\nstderr:\n%s", code, out, tail(stderr, 60))
	}
	t.Logf("bytes uploaded into app/premount: %d (per digest %v)", up.total, up.byDigest)

	t.Run("one mount per base layer", func(t *testing.T) {
		mounts := map[v1.Hash]int{}
		for _, q := range reg.Requests() {
			v, _ := url.ParseQuery(q.Query)
			if q.Method != http.MethodPost || q.Path != up.prefix || v.Get("mount") == "" {
				continue
			}
			h, err := v1.NewHash(v.Get("mount"))
			if err != nil || baseRepos[h] == "" {
				t.Errorf("mount of %q, not a base layer: %s", v.Get("mount"), q)
				continue
			}
			if v.Get("from") != baseRepos[h] || q.Status != http.StatusCreated {
				t.Errorf("mount %s: want from=%s answered 201", q, baseRepos[h])
			}
			mounts[h]++
		}
		for _, l := range baseLayers {
			if mounts[l.Digest] != 1 {
				t.Errorf("base layer %s (%s): %d mounts, want 1", l.Digest, baseRepos[l.Digest], mounts[l.Digest])
			}
		}
	})
	t.Run("no base layer uploaded", func(t *testing.T) {
		for _, l := range baseLayers {
			if n, ok := up.byDigest[l.Digest.String()]; ok {
				t.Errorf("base layer %s (%d bytes) uploaded again: %d bytes", l.Digest, l.Size, n)
			}
		}
		if up.total >= winLayers[0].Size {
			t.Errorf("%d bytes uploaded, at least the Windows base layer's %d", up.total, winLayers[0].Size)
		}
	})
	t.Run("pushed manifests keep the base layers", func(t *testing.T) {
		ref, im := distIndex(t, reg, tag)
		want := map[string][]v1.Descriptor{"windows": winLayers, "linux": amd64.Layers}
		for _, d := range im.Manifests {
			if d.Platform == nil || want[d.Platform.OS] == nil {
				continue
			}
			img, err := remote.Image(ref.Context().Digest(d.Digest.String()), reg.Remote()...)
			if err != nil {
				t.Fatal(err)
			}
			got := manifestLayers(t, img)
			base := want[d.Platform.OS]
			if len(got) != len(base)+1 {
				t.Errorf("%s: %d layers, want the base's %d and one", d.Platform, len(got), len(base))
				continue
			}
			for j, l := range base {
				if got[j].Digest != l.Digest {
					t.Errorf("%s: layer %d is %s, the base's is %s", d.Platform, j, got[j].Digest, l.Digest)
				}
			}
			delete(want, d.Platform.OS)
		}
		if len(want) != 0 {
			t.Errorf("no image for %v in the index", want)
		}
		if strings.Contains(stderr, "does not list the layers of its base") {
			t.Errorf("build says the base layers changed:\n%s", stderr)
		}
	})
	t.Run("pre-mounting logged", func(t *testing.T) {
		for _, base := range []string{winRef.Context().Name(), linuxRef.Context().Name()} {
			if !strings.Contains(stderr, `msg=pre-mounting base=`+base) {
				t.Errorf("no pre-mounting line for %s:\n%s", base, tail(stderr, 40))
			}
		}
	})
	// The cause (build/content/premount.go): BuildKit pulled the Windows base
	// layer for the COPY and kept no distribution-source label naming the
	// base's repository on it, so its push had nothing to mount from.
	t.Run("BuildKit kept no source for the pulled base layer", func(t *testing.T) {
		c, err := daemon.Client(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		info, err := c.ContentClient().Info(context.Background(), &contentapi.InfoRequest{Digest: winLayers[0].Digest.String()})
		if err != nil {
			t.Fatalf("the daemon does not hold the pulled Windows base layer: %v", err)
		}
		label := info.Info.Labels["containerd.io/distribution.source."+strings.Split(reg.Host(), ":")[0]]
		t.Logf("distribution source of the Windows base layer in the daemon: %q", label)
		if strings.Contains(label, "bases/nanoserver") {
			t.Errorf("BuildKit now labels the pulled base layer with its source %q: its push can mount by itself, and the pre-mount may be redundant", label)
		}
	})
	// A registry that answers a mount with an upload session (202): the
	// session is cancelled, the build goes on, and BuildKit uploads the
	// layer itself.
	t.Run("refused mount left to BuildKit", func(t *testing.T) {
		refused := reg.Host() + "/app/refused:1"
		up := &uploadBytes{prefix: "/v2/app/refused/blobs/uploads/", bySession: map[string]int64{}, byDigest: map[string]int64{}}
		reg.SetMiddleware(func(next http.Handler) http.Handler { return up.middleware(refuseMounts(next)) })
		reg.ResetRequests()
		out, stderr, code := run(t, "build", "-v", "--builder", daemon.Addr, "--progress", "plain", "--no-verify", "--windows-plain",
			"--platform", "windows/amd64", "--windows", "ltsc2025", "--windows-base", "ltsc2025="+winRef.String(), "-t", refused, ctxDir)
		reg.SetMiddleware(nil)
		if code != 0 {
			t.Fatalf("build exit %d\nstdout:\n%s\nstderr:\n%s", code, out, tail(stderr, 60))
		}
		l := winLayers[0]
		if !strings.Contains(stderr, "base layer not mounted, BuildKit uploads it") || !strings.Contains(stderr, l.Digest.String()) {
			t.Errorf("no debug line for the refused mount:\n%s", tail(stderr, 40))
		}
		if up.byDigest[l.Digest.String()] != l.Size {
			t.Errorf("BuildKit uploaded %d bytes of the base layer, want %d", up.byDigest[l.Digest.String()], l.Size)
		}
		cancelled := 0
		for _, q := range reg.Requests() {
			if q.Method == http.MethodDelete && strings.HasPrefix(q.Path, up.prefix) {
				cancelled++
			}
		}
		if cancelled != 1 {
			t.Errorf("%d upload sessions cancelled, want 1 (the refused mount's):\n%v", cancelled, reg.Requests())
		}
	})
}

// refuseMounts drops the mount and from parameters of a blob upload POST,
// so that the registry answers with an upload session (202) as it does
// for a blob it will not mount.
func refuseMounts(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodPost && req.URL.Query().Has("mount") {
			q := req.URL.Query()
			q.Del("mount")
			q.Del("from")
			req.URL.RawQuery = q.Encode()
		}
		next.ServeHTTP(w, req)
	})
}

// manifestLayers returns img's manifest layers.
func manifestLayers(t *testing.T, img v1.Image) []v1.Descriptor {
	t.Helper()
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	return m.Layers
}
