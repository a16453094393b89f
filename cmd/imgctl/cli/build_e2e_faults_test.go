package cli

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/internal/testing/buildtest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// buildFaultsDockerfile is the smallest build with a Linux and a Windows
// variant: a COPY onto each base, so that BuildKit reads the base and
// pushes new layers, and imgctl merges one index. No compile: the faults
// are the subject, not the build.
const buildFaultsDockerfile = `ARG LINUX_BASE=distroless
ARG WINDOWS_BASE=nanoserver
FROM ${LINUX_BASE} AS final-linux
COPY hello.txt /hello.txt

FROM ${WINDOWS_BASE} AS final-windows
COPY hello.txt /app/hello.txt

FROM final-${TARGETOS}
`

// TestBuildFaults: registry faults during imgctl build on a real buildkitd,
// counted in RELIABILITY.md under build. Transient faults in every phase (imgctl's
// tag check, the builder's resolution and reads of the base, BuildKit's uploads and manifest
// PUTs, imgctl's index PUT) are survived with the same index; persistent
// ones end the build with exit 2, a message naming the failure, nothing on
// stdout and no tag, although BuildKit may have pushed variants by digest.
// Each case builds into its own repository and, where BuildKit must read
// the base, from a Windows base it has not seen, so that its cache does not
// hide the fault.
func TestBuildFaults(t *testing.T) {
	relFastRetries(t)
	reg := regtest.New(t)
	host := reg.Host()
	linuxBase := host + "/distroless/static:nonroot"
	lin, err := buildtest.DistrolessLike("amd64")
	if err != nil {
		t.Fatal(err)
	}
	push(t, reg, "distroless/static:nonroot", lin)
	ctxDir := t.TempDir()
	for name, content := range map[string]string{"Dockerfile": buildFaultsDockerfile, "hello.txt": "hello\n"} {
		if err := os.WriteFile(filepath.Join(ctxDir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	daemon := buildtest.New(t, buildtest.Options{InsecureRegistries: []string{host}})

	revision := 1000
	// newBase pushes a Windows base BuildKit has not read yet and returns
	// its repository and os.version.
	newBase := func(t *testing.T, name string) (repo, osVersion string) {
		t.Helper()
		revision++
		osVersion = fmt.Sprintf("10.0.20348.%d", revision)
		img, err := buildtest.NanoserverLike(osVersion)
		if err != nil {
			t.Fatal(err)
		}
		repo = "nanoserver/" + name
		push(t, reg, repo+":ltsc2022", img)
		return repo, osVersion
	}
	build := func(t *testing.T, winRepo, tag string) (string, string, int) {
		t.Helper()
		return run(t, "build", "--builder", daemon.Addr, "--progress", "quiet", "--no-verify",
			"--platform", "linux/amd64,windows/amd64", "--windows", "ltsc2022",
			"--windows-base", "ltsc2022="+host+"/"+winRepo+":ltsc2022", "--build-arg", "LINUX_BASE="+linuxBase,
			"-t", host+"/"+tag, ctxDir)
	}
	tagAbsent := func(t *testing.T, tag string) bool {
		t.Helper()
		_, err := remote.Head(reg.MustRef(t, tag))
		return relNotFound(err)
	}
	// sameIndex reports whether tag holds the index a clean build makes:
	// linux/amd64 and windows/amd64 with the base's os.version.
	sameIndex := func(t *testing.T, tag, osVersion string) bool {
		t.Helper()
		ii, err := remote.Index(reg.MustRef(t, tag))
		if err != nil {
			t.Logf("reading %s: %v", tag, err)
			return false
		}
		im, err := ii.IndexManifest()
		if err != nil {
			return false
		}
		var plats []string
		for _, d := range im.Manifests {
			if d.Platform != nil && d.Platform.OS != "unknown" {
				plats = append(plats, d.Platform.OS+"/"+d.Platform.Architecture+":"+d.Platform.OSVersion)
			}
		}
		return strings.Join(plats, " ") == "linux/amd64: windows/amd64:"+osVersion
	}

	transient := []struct {
		kind regtest.FaultKind
		// reads and pushes: the fault also hits BuildKit's own base reads
		// and pushes. BuildKit retries 5xx and broken connections, not 429.
		// A GET reset mid-body is resumed with an open Range, which the
		// in-process registry does not serve (distribution does): no reset
		// on BuildKit's reads here.
		reads, pushes bool
	}{
		{regtest.Fault500, true, true},
		{regtest.Fault503, true, true},
		{regtest.FaultReset, false, true},
		{regtest.Fault429, false, false},
	}
	for _, tc := range transient {
		t.Run(string(tc.kind), func(t *testing.T) {
			name := "transient-" + string(tc.kind)
			winRepo, osVersion := newBase(t, name)
			target := "faults/" + name
			specs := []regtest.Fault{
				// imgctl checks the tag before it solves.
				{Kind: tc.kind, Route: regtest.RouteManifestByTag, Method: http.MethodHead, Repo: target, First: 1, RetryAfter: "0"},
				// imgctl PUTs the index.
				{Kind: tc.kind, Route: regtest.RouteManifestByTag, Method: http.MethodPut, Repo: target, First: 1, RetryAfter: "0"},
			}
			if tc.reads {
				// The builder resolves the base (a HEAD of its tag) and
				// reads the pinned base's blobs.
				specs = append(specs,
					regtest.Fault{Kind: tc.kind, Route: regtest.RouteManifestByTag, Method: http.MethodHead, Repo: winRepo, First: 1},
					regtest.Fault{Kind: tc.kind, Route: regtest.RouteBlob, Method: http.MethodGet, Repo: winRepo, First: 1})
			}
			if tc.pushes {
				specs = append(specs,
					// BuildKit pushes the variants: blobs, then manifests by digest.
					regtest.Fault{Kind: tc.kind, Route: regtest.RouteUpload, Method: http.MethodPost, Repo: target, First: 1},
					regtest.Fault{Kind: tc.kind, Route: regtest.RouteManifestByDigest, Method: http.MethodPut, Repo: target, First: 1},
				)
			}
			f := regtest.NewFaults(specs...)
			reg.SetMiddleware(f.Middleware)
			out, errOut, code := build(t, winRepo, target+":1")
			reg.SetMiddleware(nil)
			survived := code == 0 && f.Injected() == len(specs) && sameIndex(t, target+":1", osVersion)
			regtest.LogFault(t, string(tc.kind), "build", f.Injected(), survived)
			if !survived {
				t.Errorf("exit %d, %d of %d faults injected\nstdout:\n%s\nstderr:\n%s\n%s", code, f.Injected(), len(specs), out, tail(errOut, 30), daemon.LogTail(20))
			}
		})
	}

	for _, tc := range []struct {
		name string
		// fault returns the persistent fault for a case's base and target
		// repositories.
		fault func(winRepo, target string) regtest.Fault
	}{
		// The builder cannot resolve the base to pin it: no solve starts.
		{"500-persistent", func(winRepo, _ string) regtest.Fault {
			return regtest.Fault{Kind: regtest.Fault500, Route: regtest.RouteManifest, Method: http.MethodGet, Repo: winRepo}
		}},
		// BuildKit cannot read the base's blobs, after its own retries.
		{"500-persistent-base-layers", func(winRepo, _ string) regtest.Fault {
			return regtest.Fault{Kind: regtest.Fault500, Route: regtest.RouteBlob, Method: http.MethodGet, Repo: winRepo}
		}},
		// BuildKit cannot push the variants' manifests.
		{"500-persistent-push", func(_, target string) regtest.Fault {
			return regtest.Fault{Kind: regtest.Fault500, Route: regtest.RouteManifestByDigest, Method: http.MethodPut, Repo: target}
		}},
		// Every variant is pushed by digest; imgctl's index PUT fails.
		{"500-persistent-index", func(_, target string) regtest.Fault {
			return regtest.Fault{Kind: regtest.Fault500, Route: regtest.RouteManifestByTag, Method: http.MethodPut, Repo: target}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			winRepo, _ := newBase(t, tc.name)
			target := "faults/" + tc.name
			f := regtest.NewFaults(tc.fault(winRepo, target))
			reg.SetMiddleware(f.Middleware)
			out, errOut, code := build(t, winRepo, target+":1")
			reg.SetMiddleware(nil)
			// Notes may precede the error (a refused skeleton cache
			// write, when the fault hits tag PUTs).
			rest := errOut
			for strings.HasPrefix(rest, "note: ") {
				_, rest, _ = strings.Cut(rest, "\n")
			}
			survived := code == ExitError && out == "" && strings.HasPrefix(rest, "imgctl: ") &&
				strings.Contains(errOut, "500") && f.Injected() > 0 && tagAbsent(t, target+":1")
			regtest.LogFault(t, tc.name, "build", f.Injected(), survived)
			if !survived {
				t.Errorf("exit %d, %d faults injected, tag absent %t\nstdout:\n%s\nstderr:\n%s", code, f.Injected(), tagAbsent(t, target+":1"), out, tail(errOut, 30))
			}
		})
	}
}
