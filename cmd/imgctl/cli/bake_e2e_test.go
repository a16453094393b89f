package cli

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/build"
	"github.com/imgctl/imgctl/internal/testing/buildtest"
	"github.com/imgctl/imgctl/internal/testing/disttest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/lint"
	"github.com/imgctl/imgctl/snapshot"
)

// bakeDockerfile has a Linux and a Windows final stage that only copy
// files (no RUN: a Linux builder builds both, and the Windows one is
// grafted onto its base); FLAVOR picks the file a matrix target copies.
const bakeDockerfile = `ARG LINUX_BASE=gcr.io/distroless/static-debian12:nonroot
ARG WINDOWS_BASE=mcr.microsoft.com/windows/nanoserver:ltsc2025
FROM ${LINUX_BASE} AS final-linux
ARG FLAVOR=none
COPY ${FLAVOR}.txt /flavor.txt

FROM ${WINDOWS_BASE} AS final-windows
ARG FLAVOR=none
COPY ${FLAVOR}.txt /app/flavor.txt
COPY app.exe /app/app.exe
ENTRYPOINT ["C:\\app\\app.exe"]

FROM final-${TARGETOS}
`

// bakeE2EHCL: variables from the environment (REGISTRY, BASES), a
// function, inherits, a matrix, a group, Windows releases in both
// platform spellings and as a release name, a WINDOWS_BASE template, and
// a target's own attest.
const bakeE2EHCL = `variable "REGISTRY" {}
variable "BASES" {}
variable "VERSION" {
  default = "1"
}
function "tags" {
  params = [name]
  result = ["${REGISTRY}/${name}:${VERSION}"]
}
group "default" {
  targets = ["app", "flavor"]
}
target "_bases" {
  args = {
    LINUX_BASE = "${BASES}/distroless/static:nonroot"
    WINDOWS_BASE = "${BASES}/nanoserver:{ltsc}"
  }
}
target "app" {
  inherits = ["_bases"]
  platforms = ["linux/amd64", "windows(10.0.20348)/amd64", "windows/amd64:10.0.26100"]
  tags = tags("app")
  labels = { "org.opencontainers.image.source" = "https://example.com/app" }
}
target "flavor" {
  inherits = ["_bases"]
  name = "flavor-${f}"
  matrix = {
    f = ["a", "b"]
  }
  args = {
    FLAVOR = f
  }
  platforms = ["linux/arm64", "ltsc2022"]
  tags = tags("flavor-${f}")
  attest = ["type=provenance,mode=max,builder-id=` + bakeBuilderID + `"]
}
`

// bakeBuilderID is the builder id the flavor targets' attest names.
const bakeBuilderID = "https://ci.example.com/bake"

// TestBakeE2E runs imgctl bake on a real buildkitd, the tags on the CNCF
// distribution registry (htpasswd auth, credentials from the Docker
// config), the bases on another registry: an HCL file with three targets
// (one a Windows build of two releases, two from a matrix), then a
// compose file and a JSON file together, one of whose targets has a RUN in
// its Windows stage. Every index is read back: its entries, os.version
// per Windows release, the base annotations, and the attestations, through
// verify --policy.
func TestBakeE2E(t *testing.T) {
	start := time.Now()
	src := regtest.New(t)
	bases, err := buildtest.SeedRuntimeBases(src.Host())
	if err != nil {
		t.Fatal(err)
	}
	dst := distLogin(t)
	t.Setenv("BUILDKIT_HOST", "")
	daemon := buildtest.New(t, buildtest.Options{InsecureRegistries: []string{src.Host(), dst.Host()}})
	// The second daemon of the pool subtest, started here, before the
	// test leaves the module for its bake directory.
	second := buildtest.New(t, buildtest.Options{InsecureRegistries: []string{src.Host(), dst.Host()}})

	dir := t.TempDir()
	for n, c := range map[string]string{
		"Dockerfile": bakeDockerfile, "none.txt": "none\n", "a.txt": "a\n", "b.txt": "b\n", "app.exe": "MZ bake " + t.Name(),
		"docker-bake.hcl": bakeE2EHCL,
	} {
		writeFile(t, filepath.Join(dir, n), c)
	}
	t.Chdir(dir)
	reg := dst.Host() + "/bake"
	t.Setenv("REGISTRY", reg)
	t.Setenv("BASES", src.Host())
	ns := map[string]string{buildtest.OSVersionLTSC2022: bases.Nanoserver2022, buildtest.OSVersionLTSC2025: bases.Nanoserver2025}
	policy := func(builder string) string {
		return "supplyChain:\n  - platforms: [\"*\"]\n    provenance: true\n    builders:\n      - " + builder + "\n"
	}
	bakerPolicy, buildkitPolicy := filepath.Join(dir, "baker.yaml"), filepath.Join(dir, "buildkit.yaml")
	writeFile(t, bakerPolicy, policy(`builderId: "`+bakeBuilderID+`"`))
	writeFile(t, buildkitPolicy, policy(buildtest.BuildKitBuilder))

	// One run, the file found by buildx's default names.
	out, stderr, code := run(t, "bake", "--builder", daemon.Addr, "--progress", "plain", "--metadata-file", "bake.json")
	t.Logf("bake of 3 targets took %s", time.Since(start).Round(time.Millisecond))
	if code != 0 {
		t.Fatalf("bake exit %d\nstdout:\n%s\nstderr:\n%s", code, out, tail(stderr, 60))
	}
	var meta map[string]build.Metadata
	if err := json.Unmarshal([]byte(mustRead(t, filepath.Join(dir, "bake.json"))), &meta); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"app":      {"linux/amd64", "windows/amd64:" + buildtest.OSVersionLTSC2025, "windows/amd64:" + buildtest.OSVersionLTSC2022},
		"flavor-a": {"linux/arm64", "windows/amd64:" + buildtest.OSVersionLTSC2022},
		"flavor-b": {"linux/arm64", "windows/amd64:" + buildtest.OSVersionLTSC2022},
	}
	if len(meta) != len(want) {
		t.Errorf("metadata of %d targets, want %d: %v", len(meta), len(want), meta)
	}
	for name, plats := range want {
		t.Run(name, func(t *testing.T) {
			m := meta[name]
			tag := reg + "/" + name + ":1"
			if m.Index.Ref != tag || strings.Count(out, "== "+name+"\n"+m.Index.Digest) != 1 {
				t.Errorf("metadata index %+v, want %s and its digest on stdout", m.Index, tag)
			}
			got := checkBakeIndex(t, dst, tag, m, src.Host(), ns, bases.Distroless)
			if !slices.Equal(got, plats) {
				t.Errorf("index platforms %v, want %v (Windows newest first)", got, plats)
			}
			// Every image has a provenance attestation: flavor-* by the
			// builder its attest names, app by BuildKit (buildx's default,
			// mode=min, names no builder).
			releases, policy := "ltsc2022", bakerPolicy
			if name == "app" {
				// Its labels reach every image's config, grafted or not.
				ref, im := distIndex(t, dst, tag)
				for _, d := range im.Manifests {
					if snapshot.IsAttestation(d) || d.Platform == nil {
						continue
					}
					img := regtest.Must(remote.Image(ref.Context().Digest(d.Digest.String()), dst.Remote()...))(t)
					if got := regtest.Must(img.ConfigFile())(t).Config.Labels["org.opencontainers.image.source"]; got != "https://example.com/app" {
						t.Errorf("%s: label org.opencontainers.image.source = %q", d.Platform, got)
					}
				}
				releases, policy = "ltsc2022,ltsc2025", buildkitPolicy
				out, _, code := run(t, "verify", "--windows", releases, "--policy", bakerPolicy, tag)
				if code != ExitFailed || !strings.Contains(out, "untrusted-builder") {
					t.Errorf("verify --policy (builder %s): exit %d, want 1 (untrusted-builder)\n%s", bakeBuilderID, code, out)
				}
			}
			if out, stderr, code := run(t, "verify", "--windows", releases, "--policy", policy, tag); code != 0 {
				t.Errorf("verify --policy %s: exit %d\n%s%s", filepath.Base(policy), code, out, stderr)
			}
		})
	}
	if n := strings.Count(out, "PASSED"); n != 3 {
		t.Errorf("%d verify reports passed, want 3:\n%s", n, out)
	}

	t.Run("existing tags refuse the bake before any build", func(t *testing.T) {
		_, stderr, code := run(t, "bake", "--builder", "unix:///nonexistent/buildkitd.sock", "app", "flavor")
		if code != ExitError || strings.Count(stderr, "refusing to overwrite existing tag") != 3 || strings.Contains(stderr, "nonexistent") {
			t.Errorf("exit %d, stderr:\n%s", code, stderr)
		}
	})

	t.Run("a pool of two daemons takes one target each", func(t *testing.T) {
		before := solvedAttrs(t, daemon, "build-arg:FLAVOR")
		t.Setenv("VERSION", "pool")
		out, stderr, code := run(t, "bake", "--jobs", "2", "--progress", "plain", "--metadata-file", "pool.json",
			"--node", "linux="+daemon.Addr, "--node", "windows="+daemon.Addr,
			"--node", "linux="+second.Addr, "--node", "windows="+second.Addr, "flavor")
		if code != 0 {
			t.Fatalf("bake exit %d\nstdout:\n%s\nstderr:\n%s", code, out, tail(stderr, 60))
		}
		// The first daemon's history holds the earlier bake's builds too:
		// what it built now is what it holds beyond those.
		first := slices.Clone(solvedAttrs(t, daemon, "build-arg:FLAVOR"))
		for _, f := range before {
			if i := slices.Index(first, f); i >= 0 {
				first = slices.Delete(first, i, i+1)
			}
		}
		onSecond := solvedAttrs(t, second, "build-arg:FLAVOR")
		// one is the flavor every solve in fs built, "" unless there is
		// exactly one.
		one := func(fs []string) string {
			if fs = slices.Compact(slices.Clone(fs)); len(fs) != 1 {
				return ""
			}
			return fs[0]
		}
		a, b := one(first), one(onSecond)
		got := []string{a, b}
		slices.Sort(got)
		if !slices.Equal(got, []string{"a", "b"}) {
			t.Errorf("the daemons solved flavors %v and %v; want each solve of one target on one daemon, one target each", first, onSecond)
		}
		for _, f := range []string{"a", "b"} {
			addr := daemon.Addr
			if f == b {
				addr = second.Addr
			}
			if note := "target flavor-" + f + " builds on linux=" + addr + ", windows=" + addr; !strings.Contains(stderr, note) {
				t.Errorf("stderr lacks %q:\n%s", note, tail(stderr, 20))
			}
		}
		var meta map[string]build.Metadata
		if err := json.Unmarshal([]byte(mustRead(t, filepath.Join(dir, "pool.json"))), &meta); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"a", "b"} {
			m := meta["flavor-"+f]
			got := checkBakeIndex(t, dst, reg+"/flavor-"+f+":pool", m, src.Host(), ns, bases.Distroless)
			if want := []string{"linux/arm64", "windows/amd64:" + buildtest.OSVersionLTSC2022}; !slices.Equal(got, want) {
				t.Errorf("flavor-%s: platforms %v, want %v", f, got, want)
			}
		}
	})

	t.Run("compose and JSON, a failing target does not stop the other", func(t *testing.T) {
		writeFile(t, filepath.Join(dir, "Dockerfile.run"), "ARG WINDOWS_BASE=mcr.microsoft.com/windows/nanoserver:ltsc2025\nFROM ${WINDOWS_BASE}\nRUN echo hi\n")
		writeFile(t, filepath.Join(dir, "compose.yaml"), `services:
  web:
    image: `+reg+`/web:1
    build:
      context: .
      args:
        LINUX_BASE: `+bases.Distroless+`
        WINDOWS_BASE: `+bases.Nanoserver2025+`
        FLAVOR: a
      platforms: [linux/amd64, "windows/amd64:10.0.26100"]
`)
		writeFile(t, filepath.Join(dir, "docker-bake.json"), `{
  "target": {
    "broken": {
      "dockerfile": "Dockerfile.run",
      "platforms": ["ltsc2025"],
      "args": {"WINDOWS_BASE": "`+bases.Nanoserver2025+`"},
      "tags": ["`+reg+`/broken:1"]
    }
  }
}
`)
		out, stderr, code := run(t, "bake", "--builder", daemon.Addr, "--progress", "quiet", "-f", "compose.yaml", "-f", "docker-bake.json", "-o", "json", "web", "broken")
		if code != ExitFailed {
			t.Fatalf("exit %d, want 1 (lint findings)\nstdout:\n%s\nstderr:\n%s", code, out, tail(stderr, 40))
		}
		var rep struct {
			Passed  bool `json:"passed"`
			Targets map[string]struct {
				Index    *build.MetadataIndex
				Findings []struct{ Rule, File string }
				Passed   bool
				Error    string
			}
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		web, broken := rep.Targets["web"], rep.Targets["broken"]
		if rep.Passed || !web.Passed || web.Index == nil || broken.Passed || len(broken.Findings) != 1 || broken.Findings[0].Rule != lint.RuleRunInWindowsStage {
			t.Errorf("report %+v", rep)
		}
		if !strings.Contains(stderr, "bake: 1 of 2 target(s) failed: broken: 1 lint finding(s)") {
			t.Errorf("stderr lacks the failed target:\n%s", tail(stderr, 10))
		}
		if web.Index != nil {
			m := build.Metadata{Index: *web.Index}
			got := checkBakeIndex(t, dst, reg+"/web:1", m, src.Host(), ns, bases.Distroless)
			if want := []string{"linux/amd64", "windows/amd64:" + buildtest.OSVersionLTSC2025}; !slices.Equal(got, want) {
				t.Errorf("web platforms %v, want %v", got, want)
			}
		}
		if distHead(t, dst, reg+"/broken:1") != "" {
			t.Errorf("the broken target was pushed")
		}
	})
	t.Logf("bake e2e total %s", time.Since(start).Round(time.Millisecond))
}

// checkBakeIndex reads the index at tag on dst: its digest is the
// metadata's, every image names its base (the distroless index, or the
// nanoserver of its os.version, on the bases' registry) and the digest
// that base had, and every Windows config agrees with its descriptor's
// os.version. It returns the images' platforms, in index order.
func checkBakeIndex(t *testing.T, dst *disttest.Registry, tag string, m build.Metadata, basesHost string, ns map[string]string, distroless string) []string {
	t.Helper()
	ref, im := distIndex(t, dst, tag)
	if d := distHead(t, dst, tag); d != m.Index.Digest {
		t.Errorf("%s is %s, metadata says %s", tag, d, m.Index.Digest)
	}
	var plats []string
	for _, d := range im.Manifests {
		if snapshot.IsAttestation(d) || d.Platform == nil {
			continue
		}
		plats = append(plats, d.Platform.String())
		img, err := remote.Image(ref.Context().Digest(d.Digest.String()), dst.Remote()...)
		if err != nil {
			t.Fatal(err)
		}
		mf := regtest.Must(img.Manifest())(t)
		base := distroless
		if d.Platform.OS == "windows" {
			base = ns[d.Platform.OSVersion]
			if cf := regtest.Must(img.ConfigFile())(t); cf.OSVersion != d.Platform.OSVersion {
				t.Errorf("%s: config os.version %q, descriptor %q", d.Platform, cf.OSVersion, d.Platform.OSVersion)
			}
		}
		baseDesc, err := remote.Head(regtest.Must(name.ParseReference(base, name.Insecure))(t))
		if err != nil {
			t.Fatal(err)
		}
		if got := mf.Annotations[snapshot.AnnotationBaseName]; got != base || !strings.HasPrefix(got, basesHost+"/") {
			t.Errorf("%s: %s = %q, want %q", d.Platform, snapshot.AnnotationBaseName, got, base)
		}
		if got := mf.Annotations[snapshot.AnnotationBaseDigest]; got != baseDesc.Digest.String() {
			t.Errorf("%s: %s = %q, want %s", d.Platform, snapshot.AnnotationBaseDigest, got, baseDesc.Digest)
		}
	}
	return plats
}
