package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/build"
	"github.com/imgctl/imgctl/build/nodes"
	"github.com/imgctl/imgctl/internal/ghactions"
	"github.com/imgctl/imgctl/internal/testing/buildtest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/lint"
	"github.com/imgctl/imgctl/platform"
)

func TestMain(m *testing.M) {
	// Tests that run inside GitHub Actions must not all turn on its
	// output: the tests of github.go turn it on themselves.
	for _, k := range []string{ghactions.EnvActions, ghactions.EnvStepSummary, ghactions.EnvWorkspace} {
		os.Unsetenv(k)
	}
	// imgctl build caches the skeletons of Windows base layers under
	// XDG_CACHE_HOME: one cache for the package, none outside it. The go
	// command's default build cache is under XDG_CACHE_HOME too, so it is
	// pinned first: the tests that build imgctl (buildtest.ImgctlBinary)
	// must find the compiles already made, not start an empty cache.
	if os.Getenv("GOCACHE") == "" {
		out, err := exec.Command("go", "env", "GOCACHE").Output()
		if err != nil {
			fmt.Fprintln(os.Stderr, "go env GOCACHE:", err)
			os.Exit(2)
		}
		os.Setenv("GOCACHE", strings.TrimSpace(string(out)))
	}
	cache, err := os.MkdirTemp("", "imgctl-cli-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Setenv("XDG_CACHE_HOME", cache)
	code := m.Run()
	os.RemoveAll(cache)
	if err := buildtest.RemoveLayerCache(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

// e2e is the state the end-to-end build tests share: one registry, one
// buildkitd and one full build of examples/hello, whose results many
// assertions reuse.
type e2e struct {
	reg      *regtest.Registry
	bases    buildtest.Bases
	daemon   *buildtest.Daemon
	hello    string // examples/hello
	tag      string
	meta     build.Metadata
	stdout   string
	baseArgs []string
}

// TestBuildE2E builds examples/hello for linux/amd64, linux/arm64 and
// windows/amd64 (ltsc2022 and ltsc2025) on a real buildkitd, once, then
// checks the index, the images, verify, the metadata file, the cache on a
// second build, and the errors that must come before any solve; then the
// lifecycle demo's story and the supply chain, on the same daemon.
func TestBuildE2E(t *testing.T) {
	buildtest.SkipShort(t, buildtest.NeedsBuildkitd)
	start := time.Now()
	e := &e2e{reg: regtest.New(t)}
	host := e.reg.Host()
	var err error
	if e.bases, err = buildtest.SeedBases(host); err != nil {
		t.Fatalf("seeding bases: %v", err)
	}
	root, err := buildtest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	e.hello = filepath.Join(root, "examples", "hello")
	e.baseArgs = []string{
		"--windows", "ltsc2022,ltsc2025",
		"--windows-base", "ltsc2022=" + e.bases.Nanoserver2022 + ",ltsc2025=" + e.bases.Nanoserver2025,
		"--build-arg", "GOLANG_IMAGE=" + e.bases.Golang, "--build-arg", "LINUX_BASE=" + e.bases.Distroless,
	}

	// Before any daemon exists: these must fail before a solve.
	t.Run("preflight before builder", e.preflightFirst)
	t.Run("unreachable builder", e.unreachableBuilder)

	e.daemon = buildtest.New(t, buildtest.Options{InsecureRegistries: []string{host}})
	e.tag = host + "/hello:1"
	metaFile := filepath.Join(t.TempDir(), "build.json")
	summary, earlier := stepSummary(t)
	buildStart := time.Now()
	out, stderr, code := run(t, append([]string{"build", "--builder", e.daemon.Addr, "--progress", "plain", "--github",
		"-t", e.tag, "--metadata-file", metaFile, "--build-arg", "VERSION=e2e"}, append(e.baseArgs, e.hello)...)...)
	t.Logf("full build took %s", time.Since(buildStart).Round(time.Millisecond))
	if code != 0 {
		t.Fatalf("build exit %d\nstdout:\n%s\nstderr:\n%s", code, out, tail(stderr, 60))
	}
	e.stdout = out
	dt, err := os.ReadFile(metaFile)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(dt)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e.meta); err != nil {
		t.Fatalf("metadata file: %v\n%s", err, dt)
	}

	t.Run("index", e.checkIndex)
	t.Run("windows images", e.checkWindows)
	t.Run("base annotations", e.checkAnnotations)
	t.Run("bases reads the annotations", e.checkBasesCommand)
	t.Run("verify passed", func(t *testing.T) {
		if !strings.Contains(e.stdout, "PASSED") || !strings.Contains(e.stdout, e.meta.Index.Digest) {
			t.Errorf("stdout lacks the verify report:\n%s", e.stdout)
		}
	})
	t.Run("metadata", e.checkMetadata)
	t.Run("GitHub step summary", func(t *testing.T) {
		sum := readSummary(t, summary, earlier)
		want := []string{"### imgctl build `" + e.tag + "`", "**PASSED**", "| ltsc2025 | 26100 | containerd | `sha256:"}
		for _, p := range e.meta.Platforms {
			osv, ltsc := "-", "-"
			if p.OSVersion != "" {
				osv, ltsc = p.OSVersion, platform.ReleaseName(p.OSVersion)
			}
			want = append(want, fmt.Sprintf("| %s | %s | %s | `%s` |", p.Platform, osv, ltsc, p.Digest))
		}
		for _, w := range want {
			if !strings.Contains(sum, w) {
				t.Errorf("step summary lacks %q:\n%s", w, sum)
			}
		}
	})
	t.Run("default provenance per image", e.checkProvenance)
	t.Run("buildx reads the provenance", e.buildxReadsProvenance)
	t.Run("existing tag refused", e.existingTag)
	t.Run("second build is cached and ignores # syntax", e.cachedBuild)
	t.Run("linux only is tagged by BuildKit", e.linuxTaggedByBuildKit)
	t.Run("sbom from a local scanner and max provenance", e.sbomAndMaxProvenance)
	t.Run("max provenance keeps the graft", e.maxProvenanceGraft)
	t.Run("no provenance", e.noProvenance)
	t.Run("secrets and ssh reach RUN", e.secretsAndSSH)
	t.Run("registry cache export and import", e.registryCache)
	t.Run("TLS builder", e.tlsBuilder)
	t.Run("lifecycle on the same daemon", e.lifecycle) // moves a base tag: after the builds from it
	t.Run("supply chain end to end", e.supplyChain)    // moves a base tag again: last
	t.Logf("e2e total %s", time.Since(start).Round(time.Millisecond))
}

// preflightFirst: a RUN in the Windows stage fails with its line number,
// even though the builder address does not exist (so nothing was solved).
func (e *e2e) preflightFirst(t *testing.T) {
	df := filepath.Join(t.TempDir(), "Dockerfile")
	src := mustRead(t, filepath.Join(e.hello, "Dockerfile"))
	bad := strings.Replace(src, "USER ContainerUser\n", "RUN mkdir C:\\data\nUSER ContainerUser\n", 1)
	if err := os.WriteFile(df, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	line := 1 + strings.Count(bad[:strings.Index(bad, "RUN mkdir")], "\n")
	out, stderr, code := run(t, append([]string{"build", "--builder", "unix:///nonexistent/buildkitd.sock",
		"-t", e.reg.Host() + "/hello:bad", "-f", df}, append(e.baseArgs, e.hello)...)...)
	want := fmt.Sprintf("%s:%d: [%s]", df, line, lint.RuleRunInWindowsStage)
	if code != ExitFailed || !strings.Contains(out, want) || strings.Contains(stderr, "nonexistent") {
		t.Errorf("exit %d, want 1 with %q\nstdout:\n%s\nstderr:\n%s", code, want, out, stderr)
	}
	out, _, code = run(t, append([]string{"lint", "-o", "json", "-f", df}, append(e.baseArgs, e.hello)...)...)
	if code != ExitFailed || !strings.Contains(out, `"rule": "run-in-windows-stage"`) || !strings.Contains(out, `"passed": false`) {
		t.Errorf("lint exit %d\n%s", code, out)
	}
}

// unreachableBuilder names the address and where it came from, exit 2.
func (e *e2e) unreachableBuilder(t *testing.T) {
	args := append([]string{"build", "-t", e.reg.Host() + "/hello:nobuilder"}, append(e.baseArgs, e.hello)...)
	_, stderr, code := run(t, append([]string{"--builder", "unix:///nonexistent/buildkitd.sock"}, args...)...)
	if code != ExitError || !strings.Contains(stderr, "unix:///nonexistent/buildkitd.sock (from --builder)") ||
		!strings.Contains(stderr, nodes.ErrNoBuilder.Error()) {
		t.Errorf("--builder: exit %d, stderr:\n%s", code, stderr)
	}
	t.Setenv(nodes.EnvBuildkitHost, "tcp://127.0.0.1:1")
	_, stderr, code = run(t, args...)
	if code != ExitError || !strings.Contains(stderr, "tcp://127.0.0.1:1 (from $BUILDKIT_HOST)") {
		t.Errorf("BUILDKIT_HOST: exit %d, stderr:\n%s", code, stderr)
	}
}

// existingTag: the tag is refused before the builder is contacted.
func (e *e2e) existingTag(t *testing.T) {
	_, stderr, code := run(t, append([]string{"build", "--builder", "unix:///nonexistent/buildkitd.sock", "-t", e.tag},
		append(e.baseArgs, e.hello)...)...)
	if code != ExitError || !strings.Contains(stderr, "refusing to overwrite existing tag") || strings.Contains(stderr, "nonexistent") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
}

// cachedBuild builds again, to a new tag, from a copy of the Dockerfile
// with a # syntax= line (no network: it must be ignored), and expects the
// compile step to come from the cache.
func (e *e2e) cachedBuild(t *testing.T) {
	df := filepath.Join(t.TempDir(), "Dockerfile")
	src := "# syntax=docker/dockerfile:1\n" + mustRead(t, filepath.Join(e.hello, "Dockerfile"))
	if err := os.WriteFile(df, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var log requestLog
	uninstall := log.install(e.reg)
	out, stderr, code := run(t, append([]string{"build", "--builder", e.daemon.Addr, "--progress", "rawjson", "--no-verify",
		"-t", e.reg.Host() + "/hello:2", "-f", df, "--build-arg", "VERSION=e2e"}, append(e.baseArgs, e.hello)...)...)
	uninstall()
	t.Logf("cached build took %s", time.Since(start).Round(time.Millisecond))
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, tail(stderr, 40))
	}
	compiles, cached := compileVertices(stderr)
	if compiles == 0 || cached != compiles {
		t.Errorf("compile vertices: %d completed, %d cached; want all cached", compiles, cached)
	}
	// The merge reads what the solves pushed from the daemon, not back from
	// the registry, and PUTs the index once, with one HEAD of the tag before
	// the solves (the tag rule) and one after the PUT (the read-back that
	// catches a concurrent writer). imgctl reads no base: the daemon
	// resolves each base tag once (one HEAD; distroless's arm64 platform is
	// resolved by the digest its amd64 resolution returned), finds the
	// manifests and configs in its cache, and the frontend does not resolve
	// a pinned base again.
	hello, distroless, ns := repoPath(e.reg.Host()+"/hello:2"), repoPath(e.bases.Distroless), repoPath(e.bases.Nanoserver2022)
	checkRequests(t, &log, []requestCount{
		{"GET /v2/", 1, true},
		{"GET " + hello + "/", 0, false},
		{"HEAD " + hello + "/manifests/2", 2, true},
		{"PUT " + hello + "/manifests/2", 1, true},
		{"GET " + distroless + "/manifests/", 0, false},
		{"HEAD " + distroless + "/manifests/nonroot", 1, true},
		{"HEAD " + distroless + "/", 1, false},
		{"GET " + ns + "/manifests/", 0, false},
		{"GET " + ns + "/blobs/", 0, false},
		{"HEAD " + ns + "/manifests/ltsc2022", 1, true},
		{"HEAD " + ns + "/manifests/ltsc2025", 1, true},
		{"HEAD " + ns + "/", 2, false},
	})
}

func (e *e2e) ref(t *testing.T, s string) name.Reference {
	t.Helper()
	ref, err := name.ParseReference(s, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// baseDigest is what the base.digest annotation records for the base ref:
// the digest ref points at, an index or an image.
func (e *e2e) baseDigest(t *testing.T, ref string) string {
	t.Helper()
	desc, err := remote.Head(e.ref(t, ref))
	if err != nil {
		t.Fatal(err)
	}
	return desc.Digest.String()
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	dt, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(dt)
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
