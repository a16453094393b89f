package skeleton

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"slices"
	"testing"
)

// skeletonOf is a gzip tar of headers (a skeleton's shape).
func skeletonOf(t *testing.T, hs ...*tar.Header) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	tw := tar.NewWriter(zw)
	for _, h := range hs {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func dir(n string) *tar.Header  { return &tar.Header{Name: n, Typeflag: tar.TypeDir, Mode: 0o755} }
func file(n string) *tar.Header { return &tar.Header{Name: n, Typeflag: tar.TypeReg, Mode: 0o644} }

func names(t *testing.T, b []byte) []string {
	t.Helper()
	var out []string
	if err := eachEntry(b, func(h *tar.Header, _ io.Reader) error { out = append(out, h.Name); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPruneSkeletons: the placeholder keeps the tree along the written
// paths (ancestors, the paths, what lies below them), the passwd and
// group files, hard link targets of kept entries across layers, and
// whiteouts of kept paths; nothing else of Files/, nothing of Hives/.
func TestPruneSkeletons(t *testing.T) {
	link := &tar.Header{Name: "Files/App/lib.dll", Typeflag: tar.TypeLink, Linkname: "Files/Windows/WinSxS/x/lib.dll"}
	lower := skeletonOf(t, dir("Files"), dir("Hives"), file("Hives/System"), dir("Files/Windows"), dir("Files/Windows/WinSxS"),
		dir("Files/Windows/WinSxS/x"), file("Files/Windows/WinSxS/x/lib.dll"), file("Files/Windows/WinSxS/x/other.dll"),
		dir("Files/Windows/System32"), file("Files/Windows/System32/cmd.exe"), dir("Files/etc"), file("Files/etc/passwd"), file("Files/License.txt"))
	upper := skeletonOf(t, dir("Files"), dir("Files/App"), link, file("Files/App/old.txt"), file("Files/App/.wh.gone"), file("Files/.wh.License.txt"), dir("Files/Program Files"))
	out, ok, err := Prune([][]byte{lower, upper}, []string{"/app", "/Windows/System32/drivers"})
	if err != nil || !ok {
		t.Fatalf("ok %v, %v", ok, err)
	}
	wantLower := []string{"Files", "Hives", "Files/Windows", "Files/Windows/WinSxS", "Files/Windows/WinSxS/x", "Files/Windows/WinSxS/x/lib.dll",
		"Files/Windows/System32", "Files/etc", "Files/etc/passwd"}
	wantUpper := []string{"Files", "Files/App", "Files/App/lib.dll", "Files/App/old.txt", "Files/App/.wh.gone"}
	if got := names(t, out[0]); !slices.Equal(got, wantLower) {
		t.Errorf("lower layer kept %q, want %q", got, wantLower)
	}
	if got := names(t, out[1]); !slices.Equal(got, wantUpper) {
		t.Errorf("upper layer kept %q, want %q", got, wantUpper)
	}

	sym := skeletonOf(t, dir("Files"), &tar.Header{Name: "Files/app", Typeflag: tar.TypeSymlink, Linkname: "/Program Files/app"})
	out, ok, err = Prune([][]byte{sym}, []string{"/app/app.exe"})
	if err != nil || ok || !bytes.Equal(out[0], sym) {
		t.Errorf("a written path through a symlink: ok %v, %v; want the skeleton whole", ok, err)
	}
}
