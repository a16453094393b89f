package content

import (
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// TestMatchChild picks the index child BuildKit's platform match takes:
// the platform's own, arm64 by its v8 variant, and for Windows what
// containerd's matcher takes (see the last case).
func TestMatchChild(t *testing.T) {
	_, linux, err := regtest.LinuxIndex()
	if err != nil {
		t.Fatal(err)
	}
	entries := []regtest.Entry{{Image: linux[0]}, {Image: linux[1]}}
	for _, v := range []string{regtest.OSVersionLTSC2022, regtest.OSVersionLTSC2025} {
		img, err := regtest.WindowsBaseImage(v)
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, regtest.Entry{Image: img})
	}
	idx, err := regtest.Index(entries...)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := idx.RawManifest()
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]v1.Hash{}
	for _, d := range im.Manifests {
		want[d.Platform.OS+"/"+d.Platform.Architecture+"|"+d.Platform.OSVersion] = d.Digest
	}
	for _, c := range []struct {
		plat v1.Platform
		key  string
	}{
		{v1.Platform{OS: "linux", Architecture: "amd64"}, "linux/amd64|"},
		{v1.Platform{OS: "linux", Architecture: "arm64"}, "linux/arm64|"},
		{v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: regtest.OSVersionLTSC2022}, "windows/amd64|" + regtest.OSVersionLTSC2022},
		// containerd's matcher would let a 26100 request take the older
		// 20348 child listed first, as BuildKit does; resolveChild pins
		// such a base to the child of its build (an image, which needs no
		// match), and platform.BaseChild takes that same child.
		{v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: regtest.OSVersionLTSC2025}, "windows/amd64|" + regtest.OSVersionLTSC2025},
	} {
		got, err := matchChild(raw, c.plat)
		if err != nil || got != want[c.key] {
			t.Errorf("%v: %s, %v; want %s", c.plat, got, err, want[c.key])
		}
	}
	if _, err := matchChild(raw, v1.Platform{OS: "linux", Architecture: "s390x"}); err == nil {
		t.Error("linux/s390x matched a child")
	}
}

// TestIsIndex tells an index from an image by media type, or by its
// manifests list when it has none.
func TestIsIndex(t *testing.T) {
	for raw, want := range map[string]bool{
		`{"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[]}`: true,
		`{"manifests":[]}`: true,
		`{"mediaType":"application/vnd.oci.image.manifest.v1+json","layers":[]}`:    false,
		`{"schemaVersion":2,"layers":[]}`:                                           false,
		`{"mediaType":"application/vnd.docker.distribution.manifest.list.v2+json"}`: true,
	} {
		if got, err := IsIndex([]byte(raw)); err != nil || got != want {
			t.Errorf("%s: %t, %v; want %t", raw, got, err, want)
		}
	}
	if _, err := IsIndex([]byte("{")); err == nil {
		t.Error("no error for broken JSON")
	}
}

// TestCheckBaseLayers: an image that lists its base's layers unchanged at
// the bottom gets no note; one whose base layer came out under another
// digest (recompressed) gets a note naming the variant, the image and the
// base; images of another OS are not compared.
func TestCheckBaseLayers(t *testing.T) {
	h := func(s string) v1.Hash {
		hh, _, err := v1.SHA256(strings.NewReader(s))
		if err != nil {
			t.Fatal(err)
		}
		return hh
	}
	layer := func(s string) v1.Descriptor {
		return v1.Descriptor{MediaType: types.OCILayer, Digest: h(s), Size: int64(len(s))}
	}
	win := v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: regtest.OSVersionLTSC2025}
	base := BaseLayers{base: Base{Name: "reg.example/nanoserver:ltsc2025", Digest: h("base"), Target: win},
		layers: []v1.Descriptor{layer("base layer")}}
	image := func(p v1.Platform, layers ...v1.Descriptor) ExportedImage {
		return ExportedImage{Descriptor: v1.Descriptor{Digest: h(p.OS + layers[0].Digest.String()), Platform: &p}, Layers: layers}
	}
	linux := v1.Platform{OS: "linux", Architecture: "amd64"}
	for _, c := range []struct {
		name  string
		image ExportedImage
		note  bool
	}{
		{"unchanged", image(win, layer("base layer"), layer("app")), false},
		{"recompressed", image(win, layer("base layer, recompressed"), layer("app")), true},
		{"fewer layers", image(win, layer("app")), true},
		{"other OS", image(linux, layer("linux")), false},
	} {
		var notes []string
		p := &Premounter{Note: func(n string) { notes = append(notes, n) }}
		p.CheckBaseLayers("ltsc2025", &Exported{Images: []ExportedImage{c.image}}, []BaseLayers{base})
		if got := len(notes) > 0; got != c.note {
			t.Errorf("%s: notes %q, want a note: %t", c.name, notes, c.note)
		}
		for _, n := range notes {
			for _, part := range []string{"variant ltsc2025", c.image.Descriptor.Digest.String(), base.base.Name, "layer 0 differs"} {
				if !strings.Contains(n, part) {
					t.Errorf("%s: note lacks %q: %s", c.name, part, n)
				}
			}
		}
	}
}
