package cli

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/imgctl/imgctl/build"
	"github.com/imgctl/imgctl/internal/testing/buildtest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/snapshot"
)

// Registry hosts that never resolve (RFC 2606 reserves .invalid): the
// daemon of TestBuildMirrorsE2E reaches them only through its mirrors, as
// an air-gapped site reaches docker.io, gcr.io and mcr.microsoft.com.
const (
	mirroredHub = "hub.mirror-only.invalid"
	mirroredGCR = "gcr.mirror-only.invalid"
	mirroredMCR = "mcr.mirror-only.invalid"
)

// mirrorsE2E is what the subtests of TestBuildMirrorsE2E share.
type mirrorsE2E struct {
	reg    *regtest.Registry
	daemon *buildtest.Daemon
	hello  string
	bases  buildtest.Bases // as seeded, under the registry's own host
	named  buildtest.Bases // the same bases under the mirrored hosts
}

// TestBuildMirrorsE2E builds examples/hello on a daemon whose registry
// mirrors are the only way to its bases: the build names them under hosts
// that do not resolve, and the daemon's buildkitd.toml maps each of those
// hosts to the in-process registry. imgctl must resolve and pin the bases
// through the daemon; a read of its own would fail with "no such host".
func TestBuildMirrorsE2E(t *testing.T) {
	buildtest.SkipShort(t, buildtest.NeedsBuildkitd)
	e := &mirrorsE2E{reg: regtest.New(t)}
	host := e.reg.Host()
	var err error
	if e.bases, err = buildtest.SeedBases(host); err != nil {
		t.Fatalf("seeding bases: %v", err)
	}
	via := func(mirrored, ref string) string { return mirrored + strings.TrimPrefix(ref, host) }
	e.named = buildtest.Bases{
		Golang:         via(mirroredHub, e.bases.Golang),
		Distroless:     via(mirroredGCR, e.bases.Distroless),
		Nanoserver2022: via(mirroredMCR, e.bases.Nanoserver2022),
		Nanoserver2025: via(mirroredMCR, e.bases.Nanoserver2025),
	}
	root, err := buildtest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	e.hello = filepath.Join(root, "examples", "hello")
	e.daemon = buildtest.New(t, buildtest.Options{
		InsecureRegistries: []string{host},
		Mirrors:            map[string][]string{mirroredHub: {host}, mirroredGCR: {host}, mirroredMCR: {host}},
	})

	tag := host + "/hello:mirrors"
	out, stderr, code := run(t, "build", "--builder", e.daemon.Addr, "--progress", "plain", "-t", tag,
		"--windows", "ltsc2022,ltsc2025",
		"--windows-base", "ltsc2022="+e.named.Nanoserver2022+",ltsc2025="+e.named.Nanoserver2025,
		"--build-arg", "GOLANG_IMAGE="+e.named.Golang, "--build-arg", "LINUX_BASE="+e.named.Distroless,
		"--build-arg", "VERSION=e2e", e.hello)
	if code != 0 {
		t.Fatalf("build exit %d\nstdout:\n%s\nstderr:\n%s", code, out, tail(stderr, 60))
	}
	t.Run("verify passed", func(t *testing.T) {
		if !strings.Contains(out, "PASSED") {
			t.Errorf("stdout lacks the verify report:\n%s", out)
		}
	})
	t.Run("no direct read", func(t *testing.T) {
		if strings.Contains(stderr, "from its registry directly") {
			t.Errorf("imgctl noted a direct read:\n%s", stderr)
		}
	})
	// imgctl cannot reach a base that only the builder's mirror serves: the
	// builder pulls it through its mirror, imgctl makes the skeletons from
	// the builder's content store and files them in the registry cache, and
	// the Windows variants keep the graft.
	t.Run("graft through the builder for bases imgctl cannot reach", func(t *testing.T) {
		if strings.Contains(stderr, "plain path") {
			t.Errorf("a variant took the plain path:\n%s", tail(stderr, 30))
		}
		for _, b := range []string{e.named.Nanoserver2022, e.named.Nanoserver2025} {
			if !strings.Contains(stderr, "note: base "+b+": imgctl cannot read it, so the builder pulled it through its own registry configuration") {
				t.Errorf("no note of %s read through the builder:\n%s", b, tail(stderr, 30))
			}
		}
	})
	// A fresh runner (a new builder with the same mirrors, an empty local
	// cache) finds the skeletons in the tag's repository and the base
	// layers there too: nothing of the base is pulled, by anyone.
	t.Run("a fresh runner grafts from the registry's skeletons", func(t *testing.T) {
		t.Setenv("XDG_CACHE_HOME", t.TempDir())
		fresh := buildtest.New(t, buildtest.Options{
			InsecureRegistries: []string{host},
			Mirrors:            map[string][]string{mirroredHub: {host}, mirroredGCR: {host}, mirroredMCR: {host}},
		})
		_, stderr, code := run(t, "build", "-v", "--builder", fresh.Addr, "--progress", "plain", "-t", host+"/hello:mirrors-fresh",
			"--platform", "windows/amd64", "--windows", "ltsc2022,ltsc2025",
			"--windows-base", "ltsc2022="+e.named.Nanoserver2022+",ltsc2025="+e.named.Nanoserver2025,
			"--build-arg", "GOLANG_IMAGE="+e.named.Golang, "--build-arg", "VERSION=e2e", e.hello)
		if code != 0 {
			t.Fatalf("build exit %d\nstderr:\n%s", code, tail(stderr, 60))
		}
		if strings.Count(stderr, "msg=grafting") != 2 || strings.Contains(stderr, "plain path") || strings.Contains(stderr, "pulled it through") {
			t.Errorf("want both variants grafted from the registry's skeletons, nothing pulled through the builder:\n%s", tail(stderr, 40))
		}
	})
	t.Run("index", func(t *testing.T) {
		want := []string{"linux/amd64", "linux/arm64", "windows/amd64:" + buildtest.OSVersionLTSC2025, "windows/amd64:" + buildtest.OSVersionLTSC2022}
		if got := indexPlatforms(t, tag); !slices.Equal(got, want) {
			t.Errorf("index platforms = %v, want %v", got, want)
		}
	})
	t.Run("base annotations", func(t *testing.T) {
		e.checkBases(t, tag, map[string][2]string{
			"linux/amd64": {e.named.Distroless, e.top(t, e.bases.Distroless)},
			"linux/arm64": {e.named.Distroless, e.top(t, e.bases.Distroless)},
			"windows/amd64:" + buildtest.OSVersionLTSC2022: {e.named.Nanoserver2022, e.top(t, e.bases.Nanoserver2022)},
			"windows/amd64:" + buildtest.OSVersionLTSC2025: {e.named.Nanoserver2025, e.top(t, e.bases.Nanoserver2025)},
		})
	})
	t.Run("release mismatch refused", e.releaseMismatch)
	t.Run("multi-build base", e.multiBuildBase)
	t.Run("nodes resolve through their own mirrors", e.nodeMirrors)
}

// nodeMirrors spreads a build over two more daemons, each with only the
// mirror of its own bases: the Linux node mirrors gcr, the Windows node
// mcr. Every base must be resolved on the node that builds it.
func (e *mirrorsE2E) nodeMirrors(t *testing.T) {
	host := e.reg.Host()
	linux := buildtest.New(t, buildtest.Options{InsecureRegistries: []string{host}, Mirrors: map[string][]string{mirroredGCR: {host}}})
	windows := buildtest.New(t, buildtest.Options{InsecureRegistries: []string{host}, Mirrors: map[string][]string{mirroredMCR: {host}}})
	ctxDir := t.TempDir()
	writeFile(t, filepath.Join(ctxDir, "hello.txt"), "hello from every node\n")
	writeFile(t, filepath.Join(ctxDir, "Dockerfile"), nodesDockerfile)
	tag := host + "/multi:mirrors"
	out, stderr, code := run(t, "build", "--progress", "plain", "-t", tag, "--no-verify",
		"--node", "linux/amd64="+linux.Addr, "--node", "linux/arm64="+linux.Addr, "--node", "windows="+windows.Addr,
		"--windows", "ltsc2022", "--windows-base", "ltsc2022="+e.named.Nanoserver2022,
		"--build-arg", "LINUX_BASE="+e.named.Distroless, ctxDir)
	if code != 0 {
		t.Fatalf("build exit %d\nstdout:\n%s\nstderr:\n%s", code, out, tail(stderr, 60))
	}
	e.checkBases(t, tag, map[string][2]string{
		"linux/amd64": {e.named.Distroless, e.top(t, e.bases.Distroless)},
		"linux/arm64": {e.named.Distroless, e.top(t, e.bases.Distroless)},
		"windows/amd64:" + buildtest.OSVersionLTSC2022: {e.named.Nanoserver2022, e.top(t, e.bases.Nanoserver2022)},
	})
}

// releaseMismatch: an ltsc2025 variant FROM the ltsc2022 base is refused
// before anything is solved or tagged, from the config the builder
// resolved through its mirror.
func (e *mirrorsE2E) releaseMismatch(t *testing.T) {
	// The ltsc2022 base under a tag that names no release, so that lint's
	// windows-base-release rule (which reads tags) lets it through and the
	// builder's resolution is what refuses it.
	src := parseRef(t, e.bases.Nanoserver2022)
	desc, err := remote.Get(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Tag(src.Context().Tag("stable"), desc); err != nil {
		t.Fatal(err)
	}
	base := mirroredMCR + strings.TrimPrefix(src.Context().Tag("stable").String(), e.reg.Host())
	before := len(solvedPlatforms(t, e.daemon))
	tag := e.reg.Host() + "/hello:mismatch"
	_, stderr, code := run(t, "build", "--builder", e.daemon.Addr, "--progress", "plain", "-t", tag,
		"--platform", "windows/amd64", "--windows", "ltsc2025", "--windows-base", "ltsc2025="+base,
		"--build-arg", "GOLANG_IMAGE="+e.named.Golang, e.hello)
	if code != ExitError || !strings.Contains(stderr, build.ErrBaseMismatch.Error()) ||
		!strings.Contains(stderr, buildtest.OSVersionLTSC2022) || !strings.Contains(stderr, base) {
		t.Errorf("exit %d, want 2 with %q naming the base and its os.version; stderr:\n%s", code, build.ErrBaseMismatch, tail(stderr, 30))
	}
	if strings.Contains(stderr, "note:") || strings.Contains(stderr, "no such host") {
		t.Errorf("imgctl read the base directly:\n%s", tail(stderr, 30))
	}
	if after := len(solvedPlatforms(t, e.daemon)); after != before {
		t.Errorf("the daemon solved %d builds, want none", after-before)
	}
	if _, err := remote.Head(parseRef(t, tag)); !relNotFound(err) {
		t.Errorf("the tag exists or HEAD failed otherwise: %v", err)
	}
}

// multiBuildBase builds both releases FROM one Docker manifest list that
// holds ltsc2022 before ltsc2025, as Microsoft's multi-build lists do.
// For a 26100 host containerd's matcher takes 20348 images too and keeps
// the first: imgctl picks the ltsc2025 child from the index the builder
// resolved (read from the daemon, not the registry) and pins it, while
// ltsc2022 is pinned to the list itself.
func (e *mirrorsE2E) multiBuildBase(t *testing.T) {
	var entries []regtest.Entry
	var children []v1.Hash
	for _, osv := range []string{buildtest.OSVersionLTSC2022, buildtest.OSVersionLTSC2025} {
		img, err := buildtest.NanoserverLike(osv)
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, regtest.Entry{Image: img})
		children = append(children, regtest.Must(img.Digest())(t))
	}
	list := mutate.IndexMediaType(regtest.Must(regtest.Index(entries...))(t), types.DockerManifestList)
	multi := e.reg.Host() + "/nanoserver:multi"
	top := regtest.MustPush(t, parseRef(t, multi), list)
	named := mirroredMCR + "/nanoserver:multi"

	tag := e.reg.Host() + "/hello:multi"
	out, stderr, code := run(t, "build", "--builder", e.daemon.Addr, "--progress", "plain", "-t", tag,
		"--platform", "windows/amd64", "--windows", "ltsc2022,ltsc2025", "--windows-base", "ltsc2022="+named+",ltsc2025="+named,
		"--build-arg", "GOLANG_IMAGE="+e.named.Golang, "--build-arg", "VERSION=e2e", e.hello)
	if code != 0 {
		t.Fatalf("build exit %d\nstdout:\n%s\nstderr:\n%s", code, out, tail(stderr, 60))
	}
	if !strings.Contains(out, "PASSED") || strings.Contains(stderr, "from its registry directly") {
		t.Errorf("want verify PASSED and no direct read\nstdout:\n%s\nstderr:\n%s", out, tail(stderr, 30))
	}
	want := []string{"windows/amd64:" + buildtest.OSVersionLTSC2025, "windows/amd64:" + buildtest.OSVersionLTSC2022}
	if got := indexPlatforms(t, tag); !slices.Equal(got, want) {
		t.Errorf("index platforms = %v, want %v", got, want)
	}
	e.checkBases(t, tag, map[string][2]string{
		"windows/amd64:" + buildtest.OSVersionLTSC2022: {named, top.String()},
		"windows/amd64:" + buildtest.OSVersionLTSC2025: {named, children[1].String()},
	})
}

// top is the digest ref points at in the registry: an index or an image.
func (e *mirrorsE2E) top(t *testing.T, ref string) string {
	t.Helper()
	d, err := remote.Head(parseRef(t, ref))
	if err != nil {
		t.Fatal(err)
	}
	return d.Digest.String()
}

// checkBases checks the base annotations of every image of the index at
// tag against want: platform -> {base.name, base.digest}.
func (e *mirrorsE2E) checkBases(t *testing.T, tag string, want map[string][2]string) {
	t.Helper()
	ii, err := remote.Index(parseRef(t, tag))
	if err != nil {
		t.Fatal(err)
	}
	im := regtest.Must(ii.IndexManifest())(t)
	n := 0
	for _, d := range im.Manifests {
		if d.Platform == nil || d.Platform.OS == "unknown" {
			continue
		}
		n++
		m := regtest.Must(regtest.Must(ii.Image(d.Digest))(t).Manifest())(t)
		w := want[d.Platform.String()]
		if got := m.Annotations[snapshot.AnnotationBaseName]; got != w[0] {
			t.Errorf("%s: %s = %q, want %q", d.Platform, snapshot.AnnotationBaseName, got, w[0])
		}
		if got := m.Annotations[snapshot.AnnotationBaseDigest]; got != w[1] {
			t.Errorf("%s: %s = %q, want %q", d.Platform, snapshot.AnnotationBaseDigest, got, w[1])
		}
	}
	if n != len(want) {
		t.Errorf("%d images, want %d", n, len(want))
	}
}
