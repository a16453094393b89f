package graft

import (
	"archive/tar"
	"bytes"
	"maps"
	"slices"
	"testing"
)

// TestTarFiles: of a Windows layer's entries, the regular files and hard
// links under Files/ count, by rootfs path lower-cased; directories,
// Hives/ and Files/ itself do not.
func TestTarFiles(t *testing.T) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range []tar.Header{
		{Name: "Files/", Typeflag: tar.TypeDir},
		{Name: "Files/Windows/", Typeflag: tar.TypeDir},
		{Name: "Files/Windows/A.TXT", Typeflag: tar.TypeReg, Size: 1},
		{Name: "Files/Windows/b.txt", Typeflag: tar.TypeLink, Linkname: "Files/Windows/A.TXT"},
		{Name: "Hives/DefaultUser_Delta", Typeflag: tar.TypeReg},
	} {
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			if _, err := tw.Write([]byte("x")); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	if err := tarFiles(&buf, got); err != nil {
		t.Fatal(err)
	}
	if want := []string{"/windows/a.txt", "/windows/b.txt"}; !slices.Equal(slices.Sorted(maps.Keys(got)), want) {
		t.Errorf("tarFiles = %v, want %v", slices.Sorted(maps.Keys(got)), want)
	}
}
