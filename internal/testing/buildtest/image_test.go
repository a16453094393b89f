package buildtest

import (
	"archive/tar"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// layerFiles returns the tar entries of every layer of img, by name.
func layerFiles(t *testing.T, img v1.Image) map[string]*tar.Header {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*tar.Header{}
	for _, l := range layers {
		forEachEntry(t, l, func(h *tar.Header, _ io.Reader) { files[h.Name] = h })
	}
	return files
}

// The layers are gzip tars; gzip(1) decompresses them, because
// compress/gzip compiled with -race takes tens of seconds for the
// toolchain layer.
func forEachEntry(t *testing.T, l v1.Layer, fn func(*tar.Header, io.Reader)) {
	t.Helper()
	rc, err := l.Compressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	cmd := exec.Command("gzip", "-dc")
	cmd.Stdin = rc
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(out)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		fn(h, tr)
	}
	if _, err := io.Copy(io.Discard, out); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("gzip -dc: %v", err)
	}
}

func TestGolangImageContent(t *testing.T) {
	SkipShort(t, NeedsBusybox)
	img, err := GolangImage()
	if err != nil {
		t.Fatal(err)
	}
	files := layerFiles(t, img)
	for _, want := range []string{
		"bin/busybox", "bin/sh", "bin/mkdir", "tmp/",
		"usr/local/go/bin/go", "usr/local/go/go.env", "usr/local/go/VERSION",
		"usr/local/go/pkg/tool/linux_amd64/compile", "usr/local/go/pkg/tool/linux_amd64/link",
		"usr/local/go/pkg/include/textflag.h", "usr/local/go/src/runtime/proc.go", "usr/local/go/src/go.mod",
	} {
		if files[want] == nil {
			t.Errorf("missing %s", want)
		}
	}
	for name := range files {
		if strings.HasSuffix(name, "_test.go") || strings.Contains(name, "/testdata/") ||
			strings.HasPrefix(name, "usr/local/go/src/cmd/") || strings.HasPrefix(name, "usr/local/go/test/") {
			t.Errorf("unexpected %s", name)
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != "linux" || cf.Architecture != "amd64" || !strings.Contains(strings.Join(cf.Config.Env, " "), "GOTOOLCHAIN=local") {
		t.Errorf("config = %s/%s %v", cf.OS, cf.Architecture, cf.Config.Env)
	}
}

func TestSeedBases(t *testing.T) {
	SkipShort(t, NeedsBusybox)
	srv := httptest.NewServer(registry.New(registry.Logger(quietLogger())))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	b, err := SeedBases(host)
	if err != nil {
		t.Fatal(err)
	}
	get := func(s string) *remote.Descriptor {
		t.Helper()
		ref, err := name.ParseReference(s, name.Insecure)
		if err != nil {
			t.Fatal(err)
		}
		d, err := remote.Get(ref)
		if err != nil {
			t.Fatalf("getting %s: %v", s, err)
		}
		return d
	}
	idx, err := get(b.Distroless).ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 2 || im.Manifests[1].Platform.Architecture != "arm64" {
		t.Errorf("distroless index = %+v", im.Manifests)
	}
	for ref, osVersion := range map[string]string{b.Nanoserver2022: OSVersionLTSC2022, b.Nanoserver2025: OSVersionLTSC2025} {
		img, err := get(ref).Image()
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.OS != "windows" || cf.OSVersion != osVersion || cf.Config.User != "ContainerUser" {
			t.Errorf("%s config = %s %s user %q", ref, cf.OS, cf.OSVersion, cf.Config.User)
		}
		files := layerFiles(t, img)
		if files["Files"] == nil || files["Hives"] == nil || files["Files"].PAXRecords["MSWINDOWS.fileattr"] == "" {
			t.Errorf("%s layer lacks the Windows layout", ref)
		}
	}
	if _, err := get(b.Golang).Image(); err != nil {
		t.Fatal(err)
	}
}

func TestDistrolessLike(t *testing.T) {
	img, err := DistrolessLike("arm64")
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.User != "65532" || cf.Architecture != "arm64" || cf.Variant != "v8" {
		t.Errorf("config = %+v", cf)
	}
	files := layerFiles(t, img)
	if files["etc/passwd"] == nil || files["tmp/"] == nil || files["home/nonroot/"].Uid != NonrootUID {
		t.Errorf("layer = %v", files)
	}
}

func quietLogger() *log.Logger { return log.New(io.Discard, "", 0) }
