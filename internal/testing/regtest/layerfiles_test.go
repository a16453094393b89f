package regtest

import (
	"maps"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// TestLayerFiles reads the app layer of LinuxImage and WindowsImage: the
// regular files only (no directories, no hives' directory entries), under
// the names the tar has.
func TestLayerFiles(t *testing.T) {
	t.Parallel()
	linux := Must(LinuxImage("amd64"))(t)
	windows := Must(WindowsImage(OSVersionLTSC2022))(t)
	for _, tc := range []struct {
		img           v1.Image
		file, content string
	}{
		{linux, "app/hello", "hello from linux/amd64"},
		{windows, "Files/app/hello.exe", "hello"},
	} {
		layers, err := tc.img.Layers()
		if err != nil {
			t.Fatal(err)
		}
		files, err := LayerFiles(layers[len(layers)-1])
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(files[tc.file], tc.content) {
			t.Errorf("%s = %q, want it to contain %q (files %v)", tc.file, files[tc.file], tc.content, slices.Sorted(maps.Keys(files)))
		}
		for name := range files {
			if strings.HasSuffix(name, "/") {
				t.Errorf("LayerFiles lists the directory %s", name)
			}
		}
	}
}
