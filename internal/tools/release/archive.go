package release

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ArchiveFile is one file packed into a release archive.
type ArchiveFile struct {
	// Name is the file's name in the archive.
	Name string
	// Path is where it is on disk.
	Path string
	// Mode is its permission bits: 0o755 for the binary.
	Mode os.FileMode
}

// WriteArchive writes files into a new archive at path: a zip when path
// ends in .zip, a gzip-compressed tar otherwise. Every entry gets modTime
// (the commit time), so that the same commit packs the same bytes.
// archive/tar, archive/zip and compress/gzip do the formats; this only
// lists the entries.
func WriteArchive(path string, files []ArchiveFile, modTime time.Time) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	if strings.HasSuffix(path, ".zip") {
		err = writeZip(f, files, modTime)
	} else {
		err = writeTarGz(f, files, modTime)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Base(path), err)
	}
	return nil
}

func writeTarGz(w io.Writer, files []ArchiveFile, modTime time.Time) error {
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	for _, af := range files {
		fi, err := os.Stat(af.Path)
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: af.Name, Mode: int64(af.Mode), Size: fi.Size(), ModTime: modTime, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if err := copyFile(tw, af.Path); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func writeZip(w io.Writer, files []ArchiveFile, modTime time.Time) error {
	zw := zip.NewWriter(w)
	for _, af := range files {
		hdr := &zip.FileHeader{Name: af.Name, Method: zip.Deflate, Modified: modTime}
		hdr.SetMode(af.Mode)
		fw, err := zw.CreateHeader(hdr)
		if err != nil {
			return err
		}
		if err := copyFile(fw, af.Path); err != nil {
			return err
		}
	}
	return zw.Close()
}

func copyFile(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}
