package buildtest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
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

// writeLayer writes a gzip-compressed tar to out.
func writeLayer(out io.Writer, fill func(tarWriter) error) error {
	zw, err := gzip.NewWriterLevel(out, gzip.BestSpeed)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
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
