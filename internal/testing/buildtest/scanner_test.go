package buildtest

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"io"
	"slices"
	"testing"
)

// TestScannerImage: a linux/amd64 image whose entrypoint is the scanner,
// a static amd64 executable, with /tmp for BuildKit's tmpfs mount.
func TestScannerImage(t *testing.T) {
	img, err := ScannerImage()
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != "linux" || cf.Architecture != "amd64" || !slices.Equal(cf.Config.Entrypoint, []string{"/scanner"}) {
		t.Errorf("config %s/%s entrypoint %q", cf.OS, cf.Architecture, cf.Config.Entrypoint)
	}
	files := layerFiles(t, img)
	if files["tmp/"] == nil || files["scanner"] == nil || files["scanner"].Mode&0o111 == 0 {
		t.Fatalf("layer entries %v", files)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	var bin []byte
	forEachEntry(t, layers[0], func(h *tar.Header, r io.Reader) {
		if h.Name == "scanner" {
			bin, _ = io.ReadAll(r)
		}
	})
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		t.Fatal(err)
	}
	if f.Machine != elf.EM_X86_64 || slices.ContainsFunc(f.Progs, func(p *elf.Prog) bool { return p.Type == elf.PT_INTERP }) {
		t.Errorf("scanner: machine %v, dynamic %v", f.Machine, slices.ContainsFunc(f.Progs, func(p *elf.Prog) bool { return p.Type == elf.PT_INTERP }))
	}
}
