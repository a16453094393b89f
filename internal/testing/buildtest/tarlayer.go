package buildtest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// epoch is the modification time of every file the package writes into layers,
// so that layers (and their digests) are the same on every run.
var epoch = time.Unix(0, 0).UTC()

// tarWriter writes deterministic tar entries owned by root.
type tarWriter struct{ tw *tar.Writer }

func (w tarWriter) dir(name string, mode int64) error {
	return w.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: mode, ModTime: epoch, Format: tar.FormatPAX})
}

func (w tarWriter) file(name string, mode int64, data []byte) error {
	h := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: epoch, Format: tar.FormatPAX}
	if err := w.tw.WriteHeader(h); err != nil {
		return err
	}
	_, err := w.tw.Write(data)
	return err
}

func (w tarWriter) symlink(name, target string) error {
	return w.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: target, Mode: 0o777, ModTime: epoch, Format: tar.FormatPAX})
}

// copyFile adds the host file src as name, streaming its content.
func (w tarWriter) copyFile(name, src string, fi os.FileInfo) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	h := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: int64(fi.Mode().Perm()), Size: fi.Size(), ModTime: epoch, Format: tar.FormatPAX}
	if err := w.tw.WriteHeader(h); err != nil {
		return err
	}
	if _, err := io.Copy(w.tw, f); err != nil {
		return fmt.Errorf("copying %s: %w", src, err)
	}
	return nil
}

// memLayer builds a small gzip layer in memory.
func memLayer(fill func(tarWriter) error) (v1.Layer, error) {
	var buf bytes.Buffer
	if err := writeLayer(&buf, fill); err != nil {
		return nil, err
	}
	dt := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(dt)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

// fileLayer writes a gzip layer into the per-process layer directory
// (layerDir) as name, for layers too large to hold in memory.
func fileLayer(name string, fill func(tarWriter) error) (v1.Layer, error) {
	dir, err := layerDir()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := writeLayer(f, fill); err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	return tarball.LayerFromFile(path, tarball.WithMediaType(types.OCILayer))
}

// sharedLayer is fileLayer for a layer that depends only on key: it is
// written once per machine into sharedDir()/key/name, under a file lock,
// and every later test process and CI run reads that file. Writing the Go
// toolchain's few hundred megabytes through compress/gzip compiled with
// -race took minutes, once in each of the three test processes that build
// GolangImage. The key must name everything the content depends on
// (contentKey); the file is renamed into place whole, so a crash leaves no
// half layer.
func sharedLayer(key, name string, fill func(tarWriter) error) (v1.Layer, error) {
	root, err := sharedDir()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, key)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, name)
	lock, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return nil, fmt.Errorf("locking %s: %w", lock.Name(), err)
	}
	defer func() { _ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) }()
	if _, err := os.Stat(path); err != nil {
		if err := writeShared(dir, path, fill); err != nil {
			return nil, err
		}
	}
	raw, err := os.ReadFile(path + ".diffid")
	if err != nil {
		return nil, err
	}
	diffID, err := v1.NewHash(strings.TrimSpace(string(raw)))
	if err != nil {
		return nil, fmt.Errorf("%s.diffid: %w", path, err)
	}
	l, err := tarball.LayerFromFile(path, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	return knownDiffID{Layer: l, diffID: diffID}, nil
}

// writeShared writes a sharedLayer's file and, beside it, its diff ID
// (name.diffid), each renamed into place whole, the layer last.
func writeShared(dir, path string, fill func(tarWriter) error) error {
	f, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	h := sha256.New()
	if err := writeLayerTee(f, h, fill); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	diffID := "sha256:" + hex.EncodeToString(h.Sum(nil))
	if err := os.WriteFile(path+".diffid.tmp", []byte(diffID+"\n"), 0o644); err != nil {
		return err
	}
	if err := os.Rename(path+".diffid.tmp", path+".diffid"); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// knownDiffID is a layer whose diff ID was recorded when it was written,
// so that putting it in an image does not decompress it again (with
// -race, compress/gzip reads a hundred megabytes in tens of seconds).
type knownDiffID struct {
	v1.Layer
	diffID v1.Hash
}

// DiffID returns the recorded diff ID.
func (l knownDiffID) DiffID() (v1.Hash, error) { return l.diffID, nil }

// sharedDir is where sharedLayer keeps its files: imgctl-buildtest beside
// the machine's Go build cache (go env GOCACHE), which CI keeps between
// runs as it keeps that cache.
func sharedDir() (string, error) {
	gocache, err := machineGoCache()
	if err != nil {
		return "", err
	}
	if gocache == "" || gocache == "off" {
		return "", fmt.Errorf("go env GOCACHE is %q: the test layers are kept beside the Go build cache", gocache)
	}
	return filepath.Join(filepath.Dir(gocache), "imgctl-buildtest"), nil
}

// contentKey names content by everything it depends on, for sharedLayer.
// The "v1" is the layout of the layers this package writes: change it
// when addGOROOT, addTree or writeLayer change what they write.
func contentKey(parts ...string) string {
	h := sha256.New()
	h.Write([]byte("v1"))
	for _, p := range parts {
		fmt.Fprintf(h, "\x00%d\x00%s", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))[:24]
}

// writeLayer writes a gzip-compressed tar to out.
func writeLayer(out io.Writer, fill func(tarWriter) error) error {
	return writeLayerTee(out, io.Discard, fill)
}

// writeLayerTee is writeLayer that also writes the uncompressed tar to
// plain (to hash it into a diff ID).
func writeLayerTee(out, plain io.Writer, fill func(tarWriter) error) error {
	zw, err := gzip.NewWriterLevel(out, gzip.BestSpeed)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(io.MultiWriter(zw, plain))
	if err := fill(tarWriter{tw}); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// newImage returns an OCI image for p with the given layers and config.
func newImage(p v1.Platform, cfg v1.Config, layers ...v1.Layer) (v1.Image, error) {
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err := mutate.AppendLayers(img, layers...)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant, cf.OSVersion = p.OS, p.Architecture, p.Variant, p.OSVersion
	cf.Config = cfg
	cf.Created = v1.Time{Time: epoch}
	return mutate.ConfigFile(img, cf)
}

// nonrootHome is the home directory of the nonroot user, owned by it.
func nonrootHome() *tar.Header {
	return &tar.Header{Typeflag: tar.TypeDir, Name: "home/nonroot/", Mode: 0o700, Uid: NonrootUID, Gid: NonrootUID, ModTime: epoch, Format: tar.FormatPAX}
}
