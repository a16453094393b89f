package cli

import (
	"archive/tar"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/internal/testing/buildtest"
	"github.com/imgctl/imgctl/snapshot"
)

func (e *e2e) index(t *testing.T) (v1.ImageIndex, *v1.IndexManifest) {
	t.Helper()
	return e.indexAt(t, e.tag)
}

// indexAt reads the index at tag.
func (e *e2e) indexAt(t *testing.T, tag string) (v1.ImageIndex, *v1.IndexManifest) {
	t.Helper()
	ii, err := remote.Index(e.ref(t, tag))
	if err != nil {
		t.Fatal(err)
	}
	im, err := ii.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	return ii, im
}

// checkIndex: one index, four images (attestations aside), Windows
// descriptors with their bases' os.version.
func (e *e2e) checkIndex(t *testing.T) {
	_, im := e.index(t)
	var plats []string
	for _, d := range im.Manifests {
		if d.Platform == nil || d.Platform.OS == "unknown" {
			continue
		}
		plats = append(plats, d.Platform.String())
	}
	want := []string{"linux/amd64", "linux/arm64", "windows/amd64:" + buildtest.OSVersionLTSC2025, "windows/amd64:" + buildtest.OSVersionLTSC2022}
	if !slices.Equal(plats, want) {
		t.Errorf("index platforms = %v, want %v", plats, want)
	}
}

// checkWindows reads each Windows image: Files/ and Hives/ layout in the
// app layer, the exec-form entrypoint and ContainerUser.
func (e *e2e) checkWindows(t *testing.T) {
	ii, im := e.index(t)
	n := 0
	for _, d := range im.Manifests {
		if d.Platform == nil || d.Platform.OS != "windows" {
			continue
		}
		n++
		img, err := ii.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.OSVersion != d.Platform.OSVersion || cf.Config.User != "ContainerUser" ||
			!slices.Equal(cf.Config.Entrypoint, []string{`C:\app\hello.exe`}) {
			t.Errorf("%s config: os.version %q user %q entrypoint %q", d.Platform, cf.OSVersion, cf.Config.User, cf.Config.Entrypoint)
		}
		layers, err := img.Layers()
		if err != nil {
			t.Fatal(err)
		}
		names, exe := layerEntries(t, layers[len(layers)-1])
		if !slices.ContainsFunc(names, hasTop("Files")) || !slices.ContainsFunc(names, hasTop("Hives")) {
			t.Errorf("%s app layer lacks Files/ and Hives/: %v", d.Platform, names)
		}
		if !strings.HasPrefix(exe, "MZ") {
			t.Errorf("%s: Files/app/hello.exe is not a PE file", d.Platform)
		}
	}
	if n != 2 {
		t.Errorf("%d windows images, want 2", n)
	}
}

// checkAnnotations: every manifest names its final base and the digest the
// base's tag pointed at (the distroless index, the nanoserver images), as
// the builder resolved and imgctl pinned it.
func (e *e2e) checkAnnotations(t *testing.T) {
	e.checkBaseAnnotations(t, e.tag, map[string]string{
		"linux/amd64": e.bases.Distroless, "linux/arm64": e.bases.Distroless,
		"windows/amd64:" + buildtest.OSVersionLTSC2022: e.bases.Nanoserver2022,
		"windows/amd64:" + buildtest.OSVersionLTSC2025: e.bases.Nanoserver2025,
	})
}

// checkBasesCommand: imgctl bases takes the recorded base.digest, an index
// (distroless) or an image (nanoserver), as the base the variant is on, and
// finds every variant current.
func (e *e2e) checkBasesCommand(t *testing.T) {
	out, stderr, code := run(t, "bases", "-o", "json", e.tag)
	var st basesJSON
	decodeStrict(t, out, &st)
	if code != 0 || st.Stale == nil || *st.Stale || len(st.Variants) != 4 {
		t.Fatalf("exit %d, %s\n%s", code, out, stderr)
	}
	for _, v := range st.Variants {
		if v.Stale || v.BaseSource != "manifest-annotation" || v.OldBase != e.baseDigest(t, v.BaseName) {
			t.Errorf("variant %+v", v)
		}
	}
}

// checkBaseAnnotations checks every image of the index at tag for the base
// annotations of its platform's base in wantName (by platform string).
func (e *e2e) checkBaseAnnotations(t *testing.T, tag string, wantName map[string]string) {
	t.Helper()
	ii, im := e.indexAt(t, tag)
	for _, d := range im.Manifests {
		if d.Platform == nil || d.Platform.OS == "unknown" {
			continue
		}
		img, err := ii.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		m, err := img.Manifest()
		if err != nil {
			t.Fatal(err)
		}
		base := wantName[d.Platform.String()]
		wantDigest := e.baseDigest(t, base)
		if got := m.Annotations[snapshot.AnnotationBaseName]; got != base {
			t.Errorf("%s: %s = %q, want %q", d.Platform, snapshot.AnnotationBaseName, got, base)
		}
		if got := m.Annotations[snapshot.AnnotationBaseDigest]; got != wantDigest {
			t.Errorf("%s: %s = %q, want %q", d.Platform, snapshot.AnnotationBaseDigest, got, wantDigest)
		}
	}
}

// checkMetadata compares the --metadata-file with the pushed index.
func (e *e2e) checkMetadata(t *testing.T) {
	ii, im := e.index(t)
	d, err := ii.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if e.meta.Index.Ref != e.tag || e.meta.Index.Digest != d.String() {
		t.Errorf("metadata index = %+v, want %s %s", e.meta.Index, e.tag, d)
	}
	if len(e.meta.Platforms) != 4 {
		t.Fatalf("metadata platforms = %+v", e.meta.Platforms)
	}
	for i, p := range e.meta.Platforms {
		desc := im.Manifests[i]
		if p.Digest != desc.Digest.String() || p.OSVersion != desc.Platform.OSVersion || p.Base == nil ||
			p.Base.Digest != e.baseDigest(t, p.Base.Name) {
			t.Errorf("metadata platform %d = %+v, descriptor %+v", i, p, desc)
		}
		if want := desc.Platform.OS + "/" + desc.Platform.Architecture; p.Platform != want {
			t.Errorf("metadata platform %d = %q, want %q", i, p.Platform, want)
		}
	}
}

func hasTop(dir string) func(string) bool {
	return func(n string) bool { return n == dir || strings.HasPrefix(n, dir+"/") }
}

// layerEntries lists a layer's entries and the first bytes of Files/app/hello.exe.
func layerEntries(t *testing.T, l v1.Layer) ([]string, string) {
	t.Helper()
	var names []string
	exe := ""
	forEachTarEntry(t, l, func(name string, r io.Reader) {
		names = append(names, name)
		if name == "Files/app/hello.exe" {
			head := make([]byte, 2)
			_, _ = io.ReadFull(r, head)
			exe = string(head)
		}
	})
	return names, exe
}

// forEachTarEntry calls fn with the name and content of each entry of a
// layer, in order.
func forEachTarEntry(t *testing.T, l v1.Layer, fn func(name string, r io.Reader)) {
	t.Helper()
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		fn(h.Name, tr)
	}
}
