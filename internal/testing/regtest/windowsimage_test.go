package regtest

import (
	"archive/tar"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// readTar returns the headers of a layer's uncompressed tar.
func readTar(t *testing.T, l v1.Layer) []*tar.Header {
	t.Helper()
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var hs []*tar.Header
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return hs
		}
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
}

func headerNamed(hs []*tar.Header, name string) *tar.Header {
	for _, h := range hs {
		if h.Name == name {
			return h
		}
	}
	return nil
}

func TestWindowsLayerLayout(t *testing.T) {
	r := New(t)
	ref := r.MustRef(t, "win:1")
	MustPush(t, ref, Must(WindowsImage(OSVersionLTSC2025))(t))
	img, err := remote.Image(ref) // read the layers back through the registry
	if err != nil {
		t.Fatal(err)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 2 {
		t.Fatalf("%d layers, want base and app", len(layers))
	}
	for i, l := range layers {
		hs := readTar(t, l)
		if len(hs) < 3 || hs[0].Name != "Hives" || hs[1].Name != "Files" {
			t.Fatalf("layer %d does not start with Hives, Files: %v", i, hs)
		}
		for _, h := range hs {
			if !strings.HasPrefix(h.Name, "Hives") && !strings.HasPrefix(h.Name, "Files") {
				t.Errorf("layer %d: entry %q outside Files/ and Hives/", i, h.Name)
			}
			want := "32"
			if h.Typeflag == tar.TypeDir {
				want = "16"
			}
			if got := h.PAXRecords[PAXFileAttr]; got != want {
				t.Errorf("layer %d %s: %s = %q, want %q", i, h.Name, PAXFileAttr, got, want)
			}
			root := h.Name == "Hives" || h.Name == "Files"
			if sd := h.PAXRecords[PAXRawSD]; root != (sd == "") {
				t.Errorf("layer %d %s: %s = %q", i, h.Name, PAXRawSD, sd)
			}
		}
	}
	base, app := readTar(t, layers[0]), readTar(t, layers[1])
	for _, n := range []string{"Hives/DefaultUser_Delta", "Files/Windows/System32/config/SOFTWARE"} {
		if headerNamed(base, n) == nil {
			t.Errorf("base layer lacks %s", n)
		}
	}
	exe := headerNamed(app, "Files/app/hello.exe")
	if exe == nil {
		t.Fatal("app layer lacks Files/app/hello.exe")
	}
	if exe.PAXRecords[PAXRawSD] != rawSDFile || exe.Mode&(1<<15) == 0 {
		t.Errorf("hello.exe header %+v", exe)
	}

	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != "windows" || cf.Architecture != "amd64" || cf.OSVersion != OSVersionLTSC2025 ||
		cf.Config.User != "ContainerUser" || !slices.Equal(cf.Config.Entrypoint, []string{`C:\app\hello.exe`}) {
		t.Fatalf("config %+v", cf)
	}
	if mt, _ := img.MediaType(); mt != types.OCIManifestSchema1 {
		t.Fatalf("media type %s", mt)
	}
}

func TestHostProcessImageHasNoOSVersion(t *testing.T) {
	cf, err := Must(HostProcessImage())(t).ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != "windows" || cf.Architecture != "amd64" || cf.OSVersion != "" {
		t.Fatalf("config platform %+v", cf.Platform())
	}
}

func TestForeignLayerIsNotUploaded(t *testing.T) {
	img := Must(ForeignLayerImage(OSVersionLTSC2022))(t)
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.MediaType != types.DockerManifestSchema2 || m.Config.MediaType != types.DockerConfigJSON {
		t.Fatalf("media types %s, %s", m.MediaType, m.Config.MediaType)
	}
	foreign := m.Layers[0]
	if foreign.MediaType != types.DockerForeignLayer {
		t.Fatalf("base layer media type %s", foreign.MediaType)
	}
	if want := []string{ForeignLayerURLPrefix + foreign.Digest.String()}; !slices.Equal(foreign.URLs, want) {
		t.Fatalf("urls %v, want %v", foreign.URLs, want)
	}
	if m.Layers[1].MediaType != types.DockerLayer {
		t.Fatalf("app layer media type %s", m.Layers[1].MediaType)
	}

	r := New(t)
	MustPush(t, r.MustRef(t, "old:1"), img)
	layers, config := blobSizes(t, img)
	if got := r.Stats().BlobBytesReceived; got != layers+config || layers != m.Layers[1].Size {
		t.Fatalf("received %d bytes, want app layer and config only (%d)", got, layers+config)
	}
	resp, err := http.Head(r.URL() + "/v2/old/blobs/" + foreign.Digest.String())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("foreign blob HEAD: %d, want 404", resp.StatusCode)
	}
}
