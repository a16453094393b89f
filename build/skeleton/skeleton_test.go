package skeleton

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/registry"
)

// skeletonSource is a Windows base layer with every kind of entry the
// skeleton must keep: directories with PAX records, a file, a hard link, a
// symbolic link, a whiteout, Hives/, and Files/etc/passwd.
func skeletonSource(t *testing.T) ([]*tar.Header, v1.Layer) {
	t.Helper()
	mt := time.Date(2025, 9, 9, 10, 0, 0, 0, time.UTC)
	dir := func(n string) *tar.Header {
		return &tar.Header{Name: n, Typeflag: tar.TypeDir, Mode: 0o40755, ModTime: mt, Format: tar.FormatPAX,
			PAXRecords: map[string]string{"MSWINDOWS.fileattr": "16", "MSWINDOWS.rawsd": "AQAEgA=="}}
	}
	file := func(n, data string) *tar.Header {
		return &tar.Header{Name: n, Typeflag: tar.TypeReg, Mode: 0o100644, Size: int64(len(data)), ModTime: mt, Format: tar.FormatPAX,
			PAXRecords: map[string]string{"MSWINDOWS.fileattr": "32", "LIBARCHIVE.creationtime": "1757412000"}}
	}
	hs := []*tar.Header{
		dir("Files"), dir("Hives"), dir("Files/Windows/"), file("Files/Windows/cmd.exe", "MZ cmd"),
		{Name: "Files/Windows/cmd2.exe", Typeflag: tar.TypeLink, Linkname: "Files/Windows/cmd.exe", ModTime: mt},
		{Name: "Files/Documents and Settings", Typeflag: tar.TypeSymlink, Linkname: "Users", ModTime: mt},
		file("Files/Windows/.wh.old.dll", ""), dir("Files/etc/"), file("Files/etc/passwd", "root:x:0:0::/:/bin/sh\n"),
		file("Hives/System_Delta", "regf"),
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range hs {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			data := map[string]string{"Files/Windows/cmd.exe": "MZ cmd", "Files/etc/passwd": "root:x:0:0::/:/bin/sh\n", "Hives/System_Delta": "regf"}[h.Name]
			if _, err := tw.Write([]byte(data)); err != nil {
				t.Fatal(err)
			}
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
	return hs, l
}

// TestWriteSkeleton checks that a skeleton keeps every header as it is
// (names, types, modes, times, links, PAX records) and empties every file
// but Files/etc/passwd and group.
func TestWriteSkeleton(t *testing.T) {
	hs, l := skeletonSource(t)
	var out bytes.Buffer
	if err := writeSkeleton(&out, l); err != nil {
		t.Fatal(err)
	}
	sk, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(out.Bytes())), nil })
	if err != nil {
		t.Fatal(err)
	}
	rc, err := sk.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	for i := 0; ; i++ {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			if i != len(hs) {
				t.Errorf("%d entries, want %d", i, len(hs))
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if i >= len(hs) {
			t.Fatalf("extra entry %s", h.Name)
		}
		w := hs[i]
		data, _ := io.ReadAll(tr)
		wantSize := int64(0)
		if w.Name == "Files/etc/passwd" {
			wantSize = w.Size
		}
		if h.Name != w.Name || h.Typeflag != w.Typeflag || h.Mode != w.Mode || !h.ModTime.Equal(w.ModTime) || h.Linkname != w.Linkname {
			t.Errorf("entry %d: %s %c %o %v %q, want %s %c %o %v %q", i, h.Name, h.Typeflag, h.Mode, h.ModTime, h.Linkname,
				w.Name, w.Typeflag, w.Mode, w.ModTime, w.Linkname)
		}
		for k, v := range w.PAXRecords {
			if h.PAXRecords[k] != v {
				t.Errorf("%s: PAX %s = %q, want %q", h.Name, k, h.PAXRecords[k], v)
			}
		}
		if h.Size != wantSize || int64(len(data)) != wantSize {
			t.Errorf("%s: size %d (%d bytes), want %d", h.Name, h.Size, len(data), wantSize)
		}
	}
}

// TestSkeletonCache checks that a base layer is read once to make its
// skeleton, which later builds take from the cache, with the same digest.
func TestSkeletonCache(t *testing.T) {
	reg := regtest.New(t)
	_, l := skeletonSource(t)
	repo, err := reg.Repo("bases/win")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteLayer(repo, l); err != nil {
		t.Fatal(err)
	}
	d, err := l.Digest()
	if err != nil {
		t.Fatal(err)
	}
	size, err := l.Size()
	if err != nil {
		t.Fatal(err)
	}
	desc := v1.Descriptor{Digest: d, Size: size}
	dir := t.TempDir()
	rc := registry.New()
	var digests []v1.Hash
	for run := range 2 {
		sk := NewMaker(dir)
		reg.ResetStats()
		s, err := sk.Layer(context.Background(), rc, repo, desc)
		if err != nil {
			t.Fatal(err)
		}
		h, err := s.Digest()
		if err != nil {
			t.Fatal(err)
		}
		digests = append(digests, h)
		wantRead := map[int]int64{0: size, 1: 0}[run]
		if sk.BytesRead() != wantRead {
			t.Errorf("run %d: %d base bytes read, want %d", run, sk.BytesRead(), wantRead)
		}
		if gets := reg.Stats().Get; (run == 0) != (gets > 0) {
			t.Errorf("run %d: %d GETs", run, gets)
		}
	}
	if digests[0] != digests[1] {
		t.Errorf("skeleton digest %s from the cache, %s when made", digests[1], digests[0])
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Errorf("cache holds %d files, want 1", len(es))
	}
}
