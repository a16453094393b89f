package build_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	spdx "github.com/spdx/tools-golang/spdx/v2/v2_3"

	"github.com/imgctl/imgctl/build"
	"github.com/imgctl/imgctl/build/nodes"
	"github.com/imgctl/imgctl/build/variant"
	"github.com/imgctl/imgctl/internal/testing/buildtest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/snapshot"
)

// sbomDockerfile is a Windows stage without RUN, which a graft keeps. Its
// WORKDIR is a directory of the base, so that the pruned placeholder
// keeps that directory's (content-less) files, which the scanner sees.
const sbomDockerfile = `ARG WINDOWS_BASE=mcr.microsoft.com/windows/nanoserver:ltsc2025
FROM ${WINDOWS_BASE}
COPY app.exe /app/app.exe
COPY app.exe /Windows/System32/app-copy.exe
WORKDIR /Windows/System32
ENTRYPOINT ["C:\\app\\app.exe"]
`

// allBlobGets counts the GETs of blobs by digest, whoever asks (BuildKit,
// or imgctl reading a base layer for its skeleton).
type allBlobGets struct {
	mu   sync.Mutex
	gets map[string]int
}

func (b *allBlobGets) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/blobs/sha256:") {
			b.mu.Lock()
			b.gets[req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:]]++
			b.mu.Unlock()
		}
		next.ServeHTTP(w, req)
	})
}

// baseBytes is how many bytes of the bases' layers the GETs since the
// last call read, and how many GETs.
func (b *allBlobGets) baseBytes(bases map[string]sbomBase) (n int, bytes int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, base := range bases {
		for j, l := range base.layers {
			n += b.gets[l.String()]
			bytes += int64(b.gets[l.String()]) * base.sizes[j]
		}
	}
	b.gets = map[string]int{}
	return n, bytes
}

// sbomBase is a Windows base pushed as MCR lays one out: an index at a
// tag holding one Windows image.
type sbomBase struct {
	ref, osVersion string
	index          v1.Hash
	layers         []v1.Hash
	sizes          []int64
}

func pushSBOMBase(t *testing.T, reg *regtest.Registry, repoTag, osVersion string) sbomBase {
	t.Helper()
	img := regtest.Must(regtest.WindowsBaseImage(osVersion, regtest.WithSeed(t.Name()+repoTag)))(t)
	idx := mutate.AppendManifests(empty.Index, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{
		Platform: &v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: osVersion}}})
	if _, err := regtest.Push(reg.MustRef(t, repoTag), idx); err != nil {
		t.Fatal(err)
	}
	b := sbomBase{ref: reg.Host() + "/" + repoTag, osVersion: osVersion, index: regtest.Must(idx.Digest())(t)}
	for _, l := range regtest.Must(img.Manifest())(t).Layers {
		b.layers, b.sizes = append(b.layers, l.Digest), append(b.sizes, l.Size)
	}
	return b
}

// sbomBuild builds dir's Dockerfile for ltsc2022 and ltsc2025 on bases
// with an SBOM from scanner and returns the build's notes.
func sbomBuild(t *testing.T, d *buildtest.Daemon, tag, dir, scanner string, bases map[string]sbomBase, sb build.SBOM, cache ...string) []string {
	t.Helper()
	tg := regtest.Must(name.NewTag(tag, name.Insecure))(t)
	var mu sync.Mutex
	var notes []string
	sb.Generator = scanner
	if len(cache) == 0 {
		cache = []string{t.TempDir()}
	}
	o := build.Options{
		Builder:    nodes.Builder{Addr: d.Addr},
		ContextDir: dir,
		Variants: variant.VariantOptions{
			Platforms:    []v1.Platform{{OS: "windows", Architecture: "amd64"}},
			Windows:      []string{"ltsc2022", "ltsc2025"},
			WindowsBases: map[string]string{"ltsc2022": bases["ltsc2022"].ref, "ltsc2025": bases["ltsc2025"].ref},
		},
		Tag:           tg,
		Registry:      registry.New(),
		Provenance:    &build.Provenance{Mode: build.ProvenanceMin},
		SBOM:          &sb,
		SkeletonCache: cache[0],
		Logger:        slog.New(slog.NewTextHandler(io.Discard, nil)),
		Note: func(m string) {
			mu.Lock()
			notes = append(notes, m)
			mu.Unlock()
		},
	}
	if _, err := build.Build(context.Background(), o); err != nil {
		t.Fatalf("build %s: %v\nbuildkitd: %s", tag, err, d.LogTail(20))
	}
	return notes
}

// sbomOf is the SPDX document attached to the image d of ii, read with
// the SPDX project's Go model, after checking that the statement's subject
// is the image.
func sbomOf(t *testing.T, ii v1.ImageIndex, im *v1.IndexManifest, d v1.Descriptor) *spdx.Document {
	t.Helper()
	for _, a := range im.Manifests {
		if s, ok := snapshot.Subject(a); !ok || s != d.Digest {
			continue
		}
		img := regtest.Must(ii.Image(a.Digest))(t)
		for _, l := range regtest.Must(img.Manifest())(t).Layers {
			if l.Annotations[snapshot.AnnotationPredicateType] != snapshot.PredicateSPDX {
				continue
			}
			rc := regtest.Must(regtest.Must(img.LayerByDigest(l.Digest))(t).Compressed())(t)
			dt, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Fatal(err)
			}
			var st struct {
				Subject []struct {
					Digest map[string]string `json:"digest"`
				} `json:"subject"`
				Predicate spdx.Document `json:"predicate"`
			}
			if err := json.Unmarshal(dt, &st); err != nil {
				t.Fatalf("%v\n%s", err, dt)
			}
			if len(st.Subject) != 1 || st.Subject[0].Digest["sha256"] != d.Digest.Hex {
				t.Errorf("%s: SBOM subject %+v, want the image %s", d.Platform, st.Subject, d.Digest)
			}
			return &st.Predicate
		}
	}
	t.Fatalf("%s: no SPDX statement attests %s", d.Platform, d.Digest)
	return nil
}

// checkWindowsOS requires doc to hold the Windows OS of base, product
// product, and the base by digest as the image's ancestor.
func checkWindowsOS(t *testing.T, doc *spdx.Document, base sbomBase, product, cpeProduct string) {
	t.Helper()
	var osPkg, basePkg *spdx.Package
	for _, p := range doc.Packages {
		switch p.PrimaryPackagePurpose {
		case "OPERATING-SYSTEM":
			if osPkg != nil {
				t.Errorf("two operating systems")
			}
			osPkg = p
		case "CONTAINER":
			basePkg = p
		}
	}
	if osPkg == nil || basePkg == nil {
		t.Fatalf("no OS or base package among %d", len(doc.Packages))
	}
	wantCPE := "cpe:2.3:o:microsoft:" + cpeProduct + ":" + base.osVersion + ":*:*:*:*:*:*:*"
	if osPkg.PackageName != product || osPkg.PackageVersion != base.osVersion || len(osPkg.PackageExternalReferences) != 1 ||
		osPkg.PackageExternalReferences[0].Locator != wantCPE {
		t.Errorf("OS package %s %s %+v, want %s %s %s", osPkg.PackageName, osPkg.PackageVersion, osPkg.PackageExternalReferences, product, base.osVersion, wantCPE)
	}
	i := strings.LastIndex(base.ref, ":")
	repo, tag := base.ref[:i], base.ref[i+1:]
	if basePkg.PackageName != repo || basePkg.PackageVersion != base.index.String() || len(basePkg.PackageExternalReferences) != 1 ||
		!strings.HasPrefix(basePkg.PackageExternalReferences[0].Locator, "pkg:oci/"+repo[strings.LastIndex(repo, "/")+1:]+"@"+base.index.String()+"?") ||
		!strings.HasSuffix(basePkg.PackageExternalReferences[0].Locator, "&tag="+tag) {
		t.Errorf("base package %s %s %+v, want %s at %s", basePkg.PackageName, basePkg.PackageVersion, basePkg.PackageExternalReferences, repo, base.index)
	}
	root := ""
	var rels []string
	for _, r := range doc.Relationships {
		rel := string(r.RefA.ElementRefID) + " " + r.Relationship + " " + string(r.RefB.ElementRefID)
		rels = append(rels, rel)
		if r.RefA.ElementRefID == "DOCUMENT" && r.Relationship == "DESCRIBES" {
			root = string(r.RefB.ElementRefID)
		}
	}
	if root == "" {
		root = "DOCUMENT"
	}
	osID, baseID := string(osPkg.PackageSPDXIdentifier), string(basePkg.PackageSPDXIdentifier)
	for _, want := range []string{root + " DESCENDANT_OF " + baseID, root + " CONTAINS " + osID, baseID + " CONTAINS " + osID} {
		if !slices.Contains(rels, want) {
			t.Errorf("no relationship %q among %v", want, rels)
		}
	}
}

// filesOf lists an SPDX document's file names.
func filesOf(doc *spdx.Document) []string {
	var out []string
	for _, f := range doc.Files {
		out = append(out, f.FileName)
	}
	slices.Sort(out)
	return out
}

// TestWindowsSBOM builds ltsc2022 (on nanoserver) and ltsc2025 (on
// servercore) variants with --sbom on a real buildkitd. On BuildKit's
// plain path each image's SBOM lists what the scanner found, base files
// included, plus the Windows operating system (product from the base
// repository, os.version, CPE) and the base by digest as the image's
// ancestor.
func TestWindowsSBOM(t *testing.T) {
	gets := &blobGets{gets: map[string]int{}}
	all := &allBlobGets{gets: map[string]int{}}
	reg := regtest.New(t, regtest.WithMiddleware(gets.middleware), regtest.WithMiddleware(all.middleware))
	bases := map[string]sbomBase{
		"ltsc2022": pushSBOMBase(t, reg, "windows/nanoserver:ltsc2022", regtest.OSVersionLTSC2022),
		"ltsc2025": pushSBOMBase(t, reg, "windows/servercore:ltsc2025", regtest.OSVersionLTSC2025),
	}
	products := map[string][2]string{
		regtest.OSVersionLTSC2022: {"Nano Server", "windows_server_2022"},
		regtest.OSVersionLTSC2025: {"Windows Server Core", "windows_server_2025"},
	}
	scanner, err := buildtest.PushScanner(reg.Host() + "/tools/scanner:1")
	if err != nil {
		t.Fatal(err)
	}
	dir := graftContext(t, sbomDockerfile)
	daemon := buildtest.New(t, buildtest.Options{InsecureRegistries: []string{reg.Host()}})

	t.Run("plain path", func(t *testing.T) {
		tag := reg.Host() + "/app/sbom:plain"
		notes := sbomBuild(t, daemon, tag, dir, scanner, bases, build.SBOM{})
		if !slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, "an SBOM scans the base's files") }) {
			t.Errorf("notes %q: want the plain path for the SBOM", notes)
		}
		ii, im := indexAt(t, tag)
		n := 0
		for _, d := range im.Manifests {
			if d.Platform == nil || d.Platform.OS != "windows" {
				continue
			}
			n++
			doc := sbomOf(t, ii, im, d)
			base := bases[platformRelease(d.Platform.OSVersion)]
			p := products[d.Platform.OSVersion]
			checkWindowsOS(t, doc, base, p[0], p[1])
			files := filesOf(doc)
			if !slices.Contains(files, "/app/app.exe") || !slices.Contains(files, "/License.txt") {
				t.Errorf("%s: the scanner's files %v lack the app or the base's License.txt", d.Platform, files)
			}
		}
		if n != 2 {
			t.Fatalf("%d Windows images, want 2", n)
		}
	})

	// --sbom base=reference keeps the graft: BuildKit fetches no base
	// layer, the scanner sees the stage's files on the placeholder, the
	// placeholder's content-less files are taken out, and the base is
	// recorded by reference.
	t.Run("base=reference", func(t *testing.T) {
		gets.take()
		tag := reg.Host() + "/app/sbom:reference"
		notes := sbomBuild(t, daemon, tag, dir, scanner, bases, build.SBOM{BaseReference: true})
		if slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, "plain path") }) {
			t.Errorf("notes %q: want both variants grafted", notes)
		}
		got := gets.take()
		for _, b := range bases {
			for _, l := range b.layers {
				if got[l.String()] > 0 {
					t.Errorf("BuildKit fetched base layer %s of %s", l, b.ref)
				}
			}
		}
		ii, im := indexAt(t, tag)
		n := 0
		for _, d := range im.Manifests {
			if d.Platform == nil || d.Platform.OS != "windows" {
				continue
			}
			n++
			doc := sbomOf(t, ii, im, d)
			base := bases[platformRelease(d.Platform.OSVersion)]
			p := products[d.Platform.OSVersion]
			checkWindowsOS(t, doc, base, p[0], p[1])
			if files := filesOf(doc); !slices.Equal(files, []string{"/Windows/System32/app-copy.exe", "/app/app.exe"}) {
				t.Errorf("%s: the SBOM lists %v, want the stage's two files only", d.Platform, files)
			}
		}
		if n != 2 {
			t.Fatalf("%d Windows images, want 2", n)
		}
	})

	// The base bytes a base=reference build moves: the first build into a
	// repository with no skeletons cached reads each base layer once, for
	// its skeleton (cached by layer digest, locally and in the tag's
	// repository); the next reads none, and mounts are not reads.
	t.Run("base=reference moves 0 base bytes once skeletons are cached", func(t *testing.T) {
		cache := t.TempDir()
		all.baseBytes(bases)
		sbomBuild(t, daemon, reg.Host()+"/app/sbom-bytes:cold", dir, scanner, bases, build.SBOM{BaseReference: true}, cache)
		coldGets, coldBytes := all.baseBytes(bases)
		sbomBuild(t, daemon, reg.Host()+"/app/sbom-bytes:warm", dir, scanner, bases, build.SBOM{BaseReference: true}, cache)
		warmGets, warmBytes := all.baseBytes(bases)
		t.Logf("base layer GETs (bytes): cold skeleton cache %d (%d), warm %d (%d)", coldGets, coldBytes, warmGets, warmBytes)
		if coldGets == 0 {
			t.Errorf("the first build read no base layer for its skeletons: the count is not counting")
		}
		if warmGets != 0 || warmBytes != 0 {
			t.Errorf("with the skeletons cached, the build read %d base layers (%d bytes); want 0", warmGets, warmBytes)
		}
	})
}

// platformRelease is the LTSC name of a test os.version.
func platformRelease(osVersion string) string {
	if osVersion == regtest.OSVersionLTSC2022 {
		return "ltsc2022"
	}
	return "ltsc2025"
}
