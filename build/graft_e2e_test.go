package build_test

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/imgctl/imgctl/build"
	"github.com/imgctl/imgctl/build/nodes"
	"github.com/imgctl/imgctl/build/variant"
	"github.com/imgctl/imgctl/internal/testing/buildtest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/snapshot"
)

// graftDockerfile has every Windows-stage shape issue 17 lists: COPY of a
// file and of a directory, COPY --from a Linux stage, COPY into a
// directory the base has, ADD of a local tar, WORKDIR into a new directory
// and into one of each base layer, an ENV extending the base's PATH, USER,
// and several COPYs, on a base of two layers.
const graftDockerfile = `ARG WINDOWS_BASE=mcr.microsoft.com/windows/nanoserver:ltsc2025
ARG LINUX_BASE=gcr.io/distroless/static-debian12:nonroot
FROM --platform=$BUILDPLATFORM ${LINUX_BASE} AS tools
COPY tool.txt /out/tool.txt
COPY assets/ /out/assets/
FROM ${WINDOWS_BASE}
COPY app.exe /app/app.exe
COPY assets/ /app/assets/
COPY --from=tools /out/ /app/tools/
COPY app.exe /Windows/System32/app-copy.exe
ADD payload.tar /payload/
WORKDIR /app/work
WORKDIR /Windows/System32
WORKDIR /Tools
ENV PATH="C:\\app;${PATH}"
USER ContainerAdministrator
ENTRYPOINT ["C:\\app\\app.exe"]
`

// graftBaseReadDockerfile copies a file out of the base: the graft's
// placeholder has no file contents, so the build takes the plain path.
const graftBaseReadDockerfile = `ARG WINDOWS_BASE=mcr.microsoft.com/windows/nanoserver:ltsc2025
FROM ${WINDOWS_BASE} AS winbase
FROM ${WINDOWS_BASE}
COPY --from=winbase /License.txt /app/License.txt
COPY app.exe /app/app.exe
`

// blobGets records the GETs of blobs by BuildKit (its User-Agent), by digest.
type blobGets struct {
	mu   sync.Mutex
	gets map[string]int
}

func (b *blobGets) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/blobs/sha256:") &&
			strings.HasPrefix(req.UserAgent(), "buildkit/") {
			b.mu.Lock()
			b.gets[req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:]]++
			b.mu.Unlock()
		}
		next.ServeHTTP(w, req)
	})
}

func (b *blobGets) take() map[string]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.gets
	b.gets = map[string]int{}
	return out
}

// TestGraftEquivalence builds the same Windows stage on a real buildkitd
// twice, grafted (imgctl's default) and on BuildKit's plain path
// (--windows-plain), and requires what a Windows node imports to be the
// same: the base's layers unchanged, then the stage's layers entry for
// entry (names, types, sizes, modes, owners, PAX records, file contents
// and file times; directory times are the build's in both), the same
// config and history, and a provenance that names the base as the plain
// build's does. The grafted build fetches no base layer.
func TestGraftEquivalence(t *testing.T) {
	gets := &blobGets{gets: map[string]int{}}
	reg := regtest.New(t, regtest.WithMiddleware(gets.middleware))
	start := time.Now().Add(-time.Second)
	base, baseLayers := twoLayerWindowsBase(t)
	// As on MCR, the tag names an index: the provenance must name what
	// the plain path's pin names.
	baseIndex := mutate.AppendManifests(empty.Index, mutate.IndexAddendum{Add: base, Descriptor: v1.Descriptor{
		Platform: &v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: regtest.OSVersionLTSC2025}}})
	baseRef := reg.Host() + "/bases/nanoserver:ltsc2025"
	if _, err := regtest.Push(reg.MustRef(t, "bases/nanoserver:ltsc2025"), baseIndex); err != nil {
		t.Fatal(err)
	}
	linux, _, err := regtest.LinuxIndex(regtest.WithSeed(t.Name()))
	if err != nil {
		t.Fatal(err)
	}
	linuxRef := reg.Host() + "/bases/linux:1"
	if _, err := regtest.Push(reg.MustRef(t, "bases/linux:1"), linux); err != nil {
		t.Fatal(err)
	}
	ctxDir := graftContext(t, graftDockerfile)
	daemon := buildtest.New(t, buildtest.Options{InsecureRegistries: []string{reg.Host()}})
	cache := t.TempDir()

	gets.take()
	var graftLog bytes.Buffer
	graftTag, graftNotes := graftBuild(t, daemon, reg.Host()+"/app/graft:grafted", ctxDir, baseRef, linuxRef, cache, false, &graftLog)
	// The placeholder was pruned to the paths the stage writes: the
	// comparison below holds for the pruned tree.
	if !strings.Contains(graftLog.String(), "placeholder pruned to the written paths") {
		t.Errorf("the placeholder was not pruned:\n%s", graftLog.String())
	}
	graftGets := gets.take()
	plainTag, plainNotes := graftBuild(t, daemon, reg.Host()+"/app/graft:plain", ctxDir, baseRef, linuxRef, cache, true)
	plainGets := gets.take()
	if len(graftNotes) != 0 || len(plainNotes) != 0 {
		t.Errorf("notes: grafted %q, plain %q; want none", graftNotes, plainNotes)
	}

	t.Run("the grafted build fetches no base layer", func(t *testing.T) {
		for _, l := range baseLayers {
			if n := graftGets[l.Digest.String()]; n != 0 {
				t.Errorf("grafted build: %d GETs of base layer %s", n, l.Digest)
			}
			if n := plainGets[l.Digest.String()]; n == 0 {
				t.Errorf("plain build: no GET of base layer %s: it no longer pulls the base, and this test compares nothing", l.Digest)
			}
		}
	})
	g, p := windowsImage(t, graftTag), windowsImage(t, plainTag)
	t.Run("the base's layers, unchanged", func(t *testing.T) {
		for _, img := range []*builtImage{g, p} {
			if len(img.manifest.Layers) <= len(baseLayers) {
				t.Fatalf("%s: %d layers", img.ref, len(img.manifest.Layers))
			}
			for j, l := range baseLayers {
				if img.manifest.Layers[j].Digest != l.Digest {
					t.Errorf("%s: layer %d is %s, the base's is %s", img.ref, j, img.manifest.Layers[j].Digest, l.Digest)
				}
			}
		}
		bc, err := base.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(g.config.RootFS.DiffIDs[:len(baseLayers)], bc.RootFS.DiffIDs) {
			t.Errorf("grafted diff_ids start %v, want the base's %v", g.config.RootFS.DiffIDs[:len(baseLayers)], bc.RootFS.DiffIDs)
		}
	})
	t.Run("the stage's layers, entry for entry", func(t *testing.T) {
		ge, pe := ownEntries(t, g, len(baseLayers), start), ownEntries(t, p, len(baseLayers), start)
		if len(ge) != len(pe) {
			t.Fatalf("grafted: %d own layers, plain: %d", len(ge), len(pe))
		}
		for j := range ge {
			if !slices.Equal(ge[j], pe[j]) {
				t.Errorf("own layer %d differs:\ngrafted:\n%s\nplain:\n%s", j, strings.Join(ge[j], "\n"), strings.Join(pe[j], "\n"))
			}
		}
		all := strings.Join(slices.Concat(ge...), "\n")
		for _, want := range []string{"Files/app/app.exe", "Files/app/assets/a.txt", "Files/app/tools/tool.txt",
			"Files/Windows/System32/app-copy.exe", "Files/payload/p/one.txt", "Files/app/work", "MSWINDOWS.rawsd"} {
			if !strings.Contains(all, want) {
				t.Errorf("no %q among the stage's entries:\n%s", want, all)
			}
		}
	})
	t.Run("the same config and history", func(t *testing.T) {
		gc, pc := g.config, p.config
		if gc.OSVersion != pc.OSVersion || gc.OSVersion != regtest.OSVersionLTSC2025 || gc.OS != "windows" {
			t.Errorf("os.version: grafted %q, plain %q, want %s", gc.OSVersion, pc.OSVersion, regtest.OSVersionLTSC2025)
		}
		for _, c := range []struct {
			what string
			g, p any
		}{
			{"env", gc.Config.Env, pc.Config.Env},
			{"user", gc.Config.User, pc.Config.User},
			{"workdir", gc.Config.WorkingDir, pc.Config.WorkingDir},
			{"entrypoint", gc.Config.Entrypoint, pc.Config.Entrypoint},
			{"cmd", gc.Config.Cmd, pc.Config.Cmd},
			{"labels", gc.Config.Labels, pc.Config.Labels},
			{"history", historyOf(gc), historyOf(pc)},
			{"diff_ids", len(gc.RootFS.DiffIDs), len(pc.RootFS.DiffIDs)},
		} {
			if fmt.Sprint(c.g) != fmt.Sprint(c.p) {
				t.Errorf("%s: grafted %v, plain %v", c.what, c.g, c.p)
			}
		}
		if !slices.ContainsFunc(gc.Config.Env, func(e string) bool { return strings.HasPrefix(e, `PATH=C:\app;C:\Windows\system32`) }) {
			t.Errorf("env %q: want PATH extended from the base's", gc.Config.Env)
		}
	})
	// The graft edits BuildKit's manifest and config in place
	// (rawmanifest), so they keep its layout: the same keys in the same
	// order as the plain build's, not re-serialised.
	t.Run("the manifest and config keep BuildKit's layout", func(t *testing.T) {
		for _, c := range []struct {
			what string
			raw  func(v1.Image) ([]byte, error)
		}{{"manifest", v1.Image.RawManifest}, {"config", v1.Image.RawConfigFile}} {
			gr, err := c.raw(g.img)
			if err != nil {
				t.Fatal(err)
			}
			pr, err := c.raw(p.img)
			if err != nil {
				t.Fatal(err)
			}
			if gk, pk := topKeys(t, gr), topKeys(t, pr); !slices.Equal(gk, pk) {
				t.Errorf("%s keys: grafted %q, plain %q", c.what, gk, pk)
			}
		}
	})
	t.Run("the provenance names the base, as the plain build's", func(t *testing.T) {
		gs, ps := provenanceOf(t, graftTag, g.digest), provenanceOf(t, plainTag, p.digest)
		if !strings.Contains(gs, g.digest.Hex) {
			t.Errorf("grafted provenance's subject is not the grafted image %s:\n%s", g.digest, gs)
		}
		gd, pd := dependencies(t, gs), dependencies(t, ps)
		if gd != pd {
			t.Logf("grafted statement:\n%s", gs)
		}
		if gd != pd {
			t.Errorf("resolved dependencies differ:\ngrafted: %s\nplain:   %s", gd, pd)
		}
		if !strings.Contains(gd, "bases/nanoserver") {
			t.Errorf("grafted provenance does not name the base: %s", gd)
		}
		if strings.Contains(gs, "app/graft@sha256") {
			t.Errorf("grafted provenance names the placeholder:\n%s", gs)
		}
	})
	// What promote and copy tools do: read every manifest and blob the
	// grafted index references, each against its descriptor's size and digest.
	t.Run("every blob of the grafted index reads back", func(t *testing.T) {
		idx, im := indexAt(t, graftTag)
		for _, d := range im.Manifests {
			img, err := idx.Image(d.Digest)
			if err != nil {
				t.Fatal(err)
			}
			m, err := img.Manifest()
			if err != nil {
				t.Fatal(err)
			}
			if m.Subject != nil && !slices.ContainsFunc(im.Manifests, func(c v1.Descriptor) bool {
				return c.Digest == m.Subject.Digest && c.Size == m.Subject.Size
			}) {
				t.Errorf("manifest %s: subject %s (%d bytes) is not in the index", d.Digest, m.Subject.Digest, m.Subject.Size)
			}
			ls, err := img.Layers()
			if err != nil {
				t.Fatal(err)
			}
			cl, err := partial.ConfigLayer(img)
			if err != nil {
				t.Fatal(err)
			}
			for j, l := range append(ls, cl) {
				want := m.Config
				if j < len(m.Layers) {
					want = m.Layers[j]
				}
				rc, err := l.Compressed()
				if err != nil {
					t.Fatal(err)
				}
				n, err := io.Copy(io.Discard, rc)
				rc.Close()
				if err != nil || n != want.Size {
					t.Errorf("manifest %s blob %s (%s): read %d bytes (%v), descriptor says %d", d.Digest, want.Digest, want.MediaType, n, err, want.Size)
				}
			}
		}
	})
	t.Run("a stage that reads the base's files takes the plain path", func(t *testing.T) {
		dir := graftContext(t, graftBaseReadDockerfile)
		gets.take()
		tag, notes := graftBuild(t, daemon, reg.Host()+"/app/graft:reads", dir, baseRef, linuxRef, cache, false)
		gets.take()
		if len(notes) != 1 || !strings.Contains(notes[0], "BuildKit's plain path") || !strings.Contains(notes[0], "--from=winbase") {
			t.Errorf("notes %q: want one saying the plain path is taken because of --from=winbase", notes)
		}
		img := windowsImage(t, tag)
		entries := strings.Join(slices.Concat(ownEntries(t, img, len(baseLayers), start)...), "\n")
		if !strings.Contains(entries, "Files/app/License.txt") || strings.Contains(entries, "Files/app/License.txt link=\"\" size=0 ") {
			t.Errorf("the base's License.txt was not copied with its content:\n%s", entries)
		}
	})
}

// twoLayerWindowsBase is regtest's nanoserver-like base with a second
// layer in the Windows layout (Files/Tools/ and a file) and PATH in its env.
func twoLayerWindowsBase(t *testing.T) (v1.Image, []v1.Descriptor) {
	t.Helper()
	img, err := regtest.WindowsBaseImage(regtest.OSVersionLTSC2025, regtest.WithSeed(t.Name()))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	mtime := time.Date(2025, 9, 9, 10, 0, 0, 0, time.UTC)
	for _, e := range []struct {
		name string
		data string
	}{{"Files/", ""}, {"Files/Tools/", ""}, {"Files/Tools/tool.exe", "MZ tool"}, {"Hives/", ""}} {
		h := &tar.Header{Name: e.name, ModTime: mtime, Format: tar.FormatPAX, Mode: 0o755, Typeflag: tar.TypeDir,
			PAXRecords: map[string]string{"MSWINDOWS.fileattr": "16"}}
		if e.data != "" {
			h.Typeflag, h.Size, h.Mode, h.PAXRecords["MSWINDOWS.fileattr"] = tar.TypeReg, int64(len(e.data)), 0o644, "32"
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	raw := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil })
	if err != nil {
		t.Fatal(err)
	}
	if img, err = mutate.Append(img, mutate.Addendum{Layer: l, History: v1.History{CreatedBy: "Install tools", Created: v1.Time{Time: mtime}}}); err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	c.Env = append(c.Env, `PATH=C:\Windows\system32;C:\Windows`)
	if img, err = mutate.Config(img, c); err != nil {
		t.Fatal(err)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	return img, m.Layers
}

// graftContext writes a build context for dockerfile.
func graftContext(t *testing.T, dockerfile string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"Dockerfile": dockerfile, "app.exe": "MZ graft app", "tool.txt": "a tool",
		"assets/a.txt": "asset a", "assets/sub/b.txt": "asset b",
	}
	for n, data := range files {
		p := filepath.Join(dir, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range []*tar.Header{
		{Name: "p/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: time.Unix(1700000000, 0)},
		{Name: "p/one.txt", Typeflag: tar.TypeReg, Mode: 0o600, Size: 3, ModTime: time.Unix(1700000000, 0)},
	} {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			if _, err := tw.Write([]byte("one")); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "payload.tar"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// graftBuild builds the Windows ltsc2025 variant of dir's Dockerfile into
// tag, grafted or (plain) on BuildKit's plain path, with provenance, and
// returns the tag and the build's notes; its log goes to log, when set.
func graftBuild(t *testing.T, d *buildtest.Daemon, tag, dir, baseRef, linuxRef, cache string, plain bool, log ...io.Writer) (string, []string) {
	t.Helper()
	tg, err := name.NewTag(tag, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var notes []string
	o := build.Options{
		Builder:    nodes.Builder{Addr: d.Addr},
		ContextDir: dir,
		Variants: variant.VariantOptions{
			Platforms:    []v1.Platform{{OS: "windows", Architecture: "amd64"}},
			Windows:      []string{"ltsc2025"},
			WindowsBases: map[string]string{"ltsc2025": baseRef},
			BuildArgs:    map[string]string{"LINUX_BASE": linuxRef},
		},
		Tag:           tg,
		Registry:      registry.New(),
		Provenance:    &build.Provenance{Mode: build.ProvenanceMin},
		WindowsPlain:  plain,
		SkeletonCache: cache,
		Logger:        slog.New(slog.NewTextHandler(io.MultiWriter(log...), nil)),
		Note: func(m string) {
			mu.Lock()
			notes = append(notes, m)
			mu.Unlock()
		},
	}
	if _, err := build.Build(context.Background(), o); err != nil {
		t.Fatalf("build %s (plain %v): %v\nbuildkitd: %s", tag, plain, err, d.LogTail(20))
	}
	return tag, notes
}

// topKeys is the keys of the JSON object raw, in order.
func topKeys(t *testing.T, raw []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object (%v): %s", err, raw)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// builtImage is the Windows image of a built index.
type builtImage struct {
	ref      string
	digest   v1.Hash
	img      v1.Image
	manifest *v1.Manifest
	config   *v1.ConfigFile
}

// indexAt reads the index at tag.
func indexAt(t *testing.T, tag string) (v1.ImageIndex, *v1.IndexManifest) {
	t.Helper()
	ref, err := name.ParseReference(tag, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := remote.Index(ref)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	return idx, im
}

func windowsImage(t *testing.T, tag string) *builtImage {
	t.Helper()
	idx, im := indexAt(t, tag)
	for _, d := range im.Manifests {
		if d.Platform == nil || d.Platform.OS != "windows" {
			continue
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		m, err := img.Manifest()
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		return &builtImage{ref: tag, digest: d.Digest, img: img, manifest: m, config: cf}
	}
	t.Fatalf("%s: no Windows image", tag)
	return nil
}

// ownEntries lists each layer after the first n as lines: type, name,
// link, size, mode, owner, PAX records, content digest and times. A
// directory's times are left out when they are the build's (after since),
// which either path stamps; a directory the base has and the stage did not
// change keeps the base's times, and those must match.
func ownEntries(t *testing.T, b *builtImage, n int, since time.Time) [][]string {
	t.Helper()
	ls, err := b.img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for _, l := range ls[n:] {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		var lines []string
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.New()
			if _, err := io.Copy(sum, tr); err != nil {
				t.Fatal(err)
			}
			buildTime := h.Typeflag == tar.TypeDir && h.ModTime.After(since)
			var pax []string
			for k, v := range h.PAXRecords {
				if !buildTime || !strings.Contains(strings.ToLower(k), "time") {
					pax = append(pax, k+"="+v)
				}
			}
			sort.Strings(pax)
			line := fmt.Sprintf("%c %s link=%q size=%d mode=%o uid=%d gid=%d pax=%v sha256=%x",
				h.Typeflag, h.Name, h.Linkname, h.Size, h.Mode, h.Uid, h.Gid, pax, sum.Sum(nil)[:8])
			if !buildTime {
				line += " mtime=" + h.ModTime.UTC().Format(time.RFC3339Nano)
			}
			lines = append(lines, line)
		}
		rc.Close()
		out = append(out, lines)
	}
	return out
}

func historyOf(cf *v1.ConfigFile) []string {
	var out []string
	for _, h := range cf.History {
		out = append(out, fmt.Sprintf("%s empty=%v", h.CreatedBy, h.EmptyLayer))
	}
	return out
}

// provenanceOf is the in-toto statement attached to image d in tag's index.
func provenanceOf(t *testing.T, tag string, d v1.Hash) string {
	t.Helper()
	idx, im := indexAt(t, tag)
	for _, a := range im.Manifests {
		if a.Annotations[snapshot.AnnotationReferenceDigest] != d.String() {
			continue
		}
		img, err := idx.Image(a.Digest)
		if err != nil {
			t.Fatal(err)
		}
		ls, err := img.Layers()
		if err != nil || len(ls) == 0 {
			t.Fatalf("attestation %s: %d layers (%v)", a.Digest, len(ls), err)
		}
		rc, err := ls[0].Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	t.Fatalf("%s: no attestation of %s", tag, d)
	return ""
}

// dependencies is the provenance's resolved dependencies, as a set, and
// the frontend's context pins, as JSON.
func dependencies(t *testing.T, statement string) string {
	t.Helper()
	var st struct {
		Predicate struct {
			BuildDefinition struct {
				ExternalParameters struct {
					Request struct {
						Args map[string]string `json:"args"`
					} `json:"request"`
				} `json:"externalParameters"`
				ResolvedDependencies []json.RawMessage `json:"resolvedDependencies"`
			} `json:"buildDefinition"`
		} `json:"predicate"`
	}
	if err := json.Unmarshal([]byte(statement), &st); err != nil {
		t.Fatal(err)
	}
	pins := map[string]string{}
	for k, v := range st.Predicate.BuildDefinition.ExternalParameters.Request.Args {
		if strings.HasPrefix(k, "context:") {
			pins[k] = v
		}
	}
	var deps []string // as a set: the list's order carries no meaning
	for _, d := range st.Predicate.BuildDefinition.ResolvedDependencies {
		deps = append(deps, string(d))
	}
	sort.Strings(deps)
	b, err := json.Marshal(map[string]any{"pins": pins, "deps": deps})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
