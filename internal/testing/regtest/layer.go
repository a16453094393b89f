package regtest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/compression"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// PAX record keys of Windows layers, as BuildKit (util/winlayers) and
// go-winio's backuptar write them.
const (
	PAXFileAttr     = "MSWINDOWS.fileattr"
	PAXRawSD        = "MSWINDOWS.rawsd"
	PAXCreationTime = "LIBARCHIVE.creationtime"
)

// Security descriptors that BuildKit writes for directories and files under
// Files/ (util/winlayers/differ.go).
const (
	// O:BAG:SYD:(A;OICI;FA;;;BA)(A;OICI;FA;;;SY)(A;;FA;;;BA)(A;OICIIO;GA;;;CO)(A;OICI;0x1200a9;;;BU)(A;CI;LC;;;BU)(A;CI;DC;;;BU)
	rawSDDir = "AQAEgBQAAAAkAAAAAAAAADAAAAABAgAAAAAABSAAAAAgAgAAAQEAAAAAAAUSAAAAAgCoAAcAAAAAAxgA/wEfAAECAAAAAAAFIAAAACACAAAAAxQA/wEfAAEBAAAAAAAFEgAAAAAAGAD/AR8AAQIAAAAAAAUgAAAAIAIAAAALFAAAAAAQAQEAAAAAAAMAAAAAAAMYAKkAEgABAgAAAAAABSAAAAAhAgAAAAIYAAQAAAABAgAAAAAABSAAAAAhAgAAAAIYAAIAAAABAgAAAAAABSAAAAAhAgAA"
	// O:BAG:SYD:(A;;FA;;;BA)(A;;FA;;;SY)(A;;0x1200a9;;;BU)
	rawSDFile = "AQAEgBQAAAAkAAAAAAAAADAAAAABAgAAAAAABSAAAAAgAgAAAQEAAAAAAAUSAAAAAgBMAAMAAAAAABgA/wEfAAECAAAAAAAFIAAAACACAAAAABQA/wEfAAEBAAAAAAAFEgAAAAAAGACpABIAAQIAAAAAAAUgAAAAIQIAAA=="
)

// entry is one file or directory of a fixture layer. Directory names end in "/".
type entry struct {
	name string
	data string
}

func (e entry) dir() bool { return strings.HasSuffix(e.name, "/") }

// tarLayer writes entries into a deterministic tar. With windows set it
// writes the layout BuildKit writes for a Windows target: "Hives" and "Files"
// first, every entry in PAX format with MSWINDOWS records.
func tarLayer(entries []entry, windows bool) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if windows {
		entries = append([]entry{{name: "Hives"}, {name: "Files"}}, entries...)
	}
	for _, e := range entries {
		h := &tar.Header{Name: e.name, ModTime: FixtureTime, Mode: 0o644, Typeflag: tar.TypeReg, Size: int64(len(e.data))}
		root := e.name == "Hives" || e.name == "Files"
		if e.dir() || root {
			h.Typeflag, h.Mode, h.Size = tar.TypeDir, 0o755, 0
		}
		if windows {
			winHeader(h, !root)
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("writing tar header %s: %w", e.name, err)
		}
		if _, err := io.WriteString(tw, e.data); err != nil {
			return nil, fmt.Errorf("writing tar entry %s: %w", e.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// winHeader mirrors prepareWinHeader and addSecurityDescriptor of BuildKit's
// util/winlayers: the "Hives" and "Files" roots get no security descriptor.
func winHeader(h *tar.Header, withSD bool) {
	h.PAXRecords = map[string]string{
		PAXCreationTime: fmt.Sprintf("%d.%d", h.ModTime.Unix(), h.ModTime.Nanosecond()),
	}
	if h.Typeflag == tar.TypeDir {
		h.Mode |= 1 << 14
		h.PAXRecords[PAXFileAttr] = "16"
		if withSD {
			h.PAXRecords[PAXRawSD] = rawSDDir
		}
	} else {
		h.Mode |= 1 << 15
		h.PAXRecords[PAXFileAttr] = "32"
		if withSD {
			h.PAXRecords[PAXRawSD] = rawSDFile
		}
	}
	h.Format = tar.FormatPAX
}

// newLayer makes a gzip-compressed layer of the given media type from entries.
func newLayer(entries []entry, windows bool, mt types.MediaType) (v1.Layer, error) {
	b, err := tarLayer(entries, windows)
	if err != nil {
		return nil, err
	}
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	}, tarball.WithMediaType(mt))
	if err != nil {
		return nil, fmt.Errorf("making layer: %w", err)
	}
	return l, nil
}

// StageLayer returns a layer of the named entries (directory names end in
// "/", a file holds its own name), as a stage of a build adds on top of its
// base: in the Windows layout BuildKit writes (the Hives and Files roots
// first, PAX records) when windows is set, or as a --link layer comes out
// of a Linux builder (names as given, no roots) when not. mt is its media
// type; zstd media types are zstd-compressed, others gzip.
func StageLayer(mt types.MediaType, windows bool, names ...string) (v1.Layer, error) {
	entries := make([]entry, 0, len(names))
	for _, n := range names {
		e := entry{name: n}
		if !e.dir() {
			e.data = n
		}
		entries = append(entries, e)
	}
	b, err := tarLayer(entries, windows)
	if err != nil {
		return nil, err
	}
	opts := []tarball.LayerOption{tarball.WithMediaType(mt)}
	if mt == types.OCILayerZStd {
		opts = append(opts, tarball.WithCompression(compression.ZStd))
	}
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	}, opts...)
	if err != nil {
		return nil, fmt.Errorf("making layer: %w", err)
	}
	return l, nil
}

// TarGz is a gzip tar of entries, each {name, content}: a name ending in
// / is a directory, anything else a regular file. Tests make hand-written
// layers (a skeleton cache entry, a poisoned one) with it.
func TarGz(t testing.TB, entries ...[2]string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		h := &tar.Header{Name: e[0], Mode: 0o644, Size: int64(len(e[1])), Typeflag: tar.TypeReg}
		if strings.HasSuffix(e[0], "/") {
			h.Typeflag, h.Mode, h.Size = tar.TypeDir, 0o755, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e[1])); err != nil {
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
