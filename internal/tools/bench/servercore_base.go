package main

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// The servercore-shaped base (issue 27, point 4) is written layer by layer
// to gzip files on disk, never held in memory, and pushed from there.

// scLayers is how many layers the synthetic servercore base has: like
// mcr.microsoft.com's servercore, a large base layer and an update layer.
const scLayers = 2

// scFixedDirs are the directories every layer starts with: the Hives and
// Files roots, Files/Windows/, Files/Windows/System32/, its config/ and
// Files/Windows/WinSxS/.
var scFixedDirs = []string{"Hives", "Files", "Files/Windows/", "Files/Windows/System32/",
	"Files/Windows/System32/config/", "Files/Windows/WinSxS/"}

// scHiveFiles are the registry hives every layer carries, as Windows base
// layers do: the deltas under Hives/ and the hives under config/.
var scHiveFiles = []string{
	"Hives/DefaultUser_Delta", "Hives/Sam_Delta", "Hives/Security_Delta", "Hives/Software_Delta", "Hives/System_Delta",
	"Files/Windows/System32/config/DEFAULT", "Files/Windows/System32/config/SAM",
	"Files/Windows/System32/config/SECURITY", "Files/Windows/System32/config/SOFTWARE",
	"Files/Windows/System32/config/SYSTEM",
}

// scMinLayerEntries is the fewest entries a layer can have: the fixed
// directories, one component directory, the hives and a few more files.
const scMinLayerEntries = 100

// Security descriptors as BuildKit writes them for directories and files
// under Files/ (regtest's rawSDDir and rawSDFile).
const (
	scRawSDDir  = "AQAEgBQAAAAkAAAAAAAAADAAAAABAgAAAAAABSAAAAAgAgAAAQEAAAAAAAUSAAAAAgCoAAcAAAAAAxgA/wEfAAECAAAAAAAFIAAAACACAAAAAxQA/wEfAAEBAAAAAAAFEgAAAAAAGAD/AR8AAQIAAAAAAAUgAAAAIAIAAAALFAAAAAAQAQEAAAAAAAMAAAAAAAMYAKkAEgABAgAAAAAABSAAAAAhAgAAAAIYAAQAAAABAgAAAAAABSAAAAAhAgAAAAIYAAIAAAABAgAAAAAABSAAAAAhAgAA"
	scRawSDFile = "AQAEgBQAAAAkAAAAAAAAADAAAAABAgAAAAAABSAAAAAgAgAAAQEAAAAAAAUSAAAAAgBMAAMAAAAAABgA/wEfAAECAAAAAAAFIAAAACACAAAAABQA/wEfAAEBAAAAAAAFEgAAAAAAGACpABIAAQIAAAAAAAUgAAAAIQIAAA=="
)

// scLayerPlan is what one layer of the base holds: Dirs directories (the
// fixed ones and WinSxS component directories), Files regular files with
// Bytes of random content between them, and Links hard links (TypeLink) to
// files of the same layer.
type scLayerPlan struct {
	Dirs, Files, Links int
	Bytes              int64
}

func (p scLayerPlan) entries() int { return p.Dirs + p.Files + p.Links }

// components is the number of WinSxS component directories.
func (p scLayerPlan) components() int { return p.Dirs - len(scFixedDirs) }

// servercorePlan splits size content bytes and entries tar entries over
// layers layers: the first layer gets three shares, every other one one
// share, as servercore's base layer dwarfs its update layer. In each layer
// a tenth of the entries are hard links and one in fifty is a component
// directory; the rest are files.
func servercorePlan(size int64, entries, layers int) ([]scLayerPlan, error) {
	if layers < 1 {
		return nil, errors.New("at least one layer")
	}
	shares := int64(layers + 2)
	// cum is the first k layers' part of total, so that the parts add up.
	cum := func(total int64, k int) int64 {
		if k == 0 {
			return 0
		}
		return total * (int64(k) + 2) / shares
	}
	var plans []scLayerPlan
	for i := range layers {
		n := int(cum(int64(entries), i+1) - cum(int64(entries), i))
		if n < scMinLayerEntries {
			return nil, fmt.Errorf("%d entries over %d layers leave layer %d with %d, want at least %d per layer",
				entries, layers, i+1, n, scMinLayerEntries)
		}
		p := scLayerPlan{Links: n / 10, Dirs: len(scFixedDirs) + max(1, n/50), Bytes: cum(size, i+1) - cum(size, i)}
		p.Files = n - p.Links - p.Dirs
		plans = append(plans, p)
	}
	return plans, nil
}

// scFileSize is the size of file i of files sharing total bytes: one file
// in ten weighs 31 times the others, so that sizes vary as in a real base,
// and the sizes add up to total exactly.
func scFileSize(total int64, files, i int) int64 {
	w := func(n int) int64 { return int64(n) + 30*int64((n+9)/10) }
	return total*w(i+1)/w(files) - total*w(i)/w(files)
}

// scFileName is the name of file i of layer layer: the hives first, then
// DLLs spread round robin over the component directories.
func scFileName(layer, i, components int) string {
	if i < len(scHiveFiles) {
		return scHiveFiles[i]
	}
	i -= len(scHiveFiles)
	return fmt.Sprintf("%sf%07d.dll", scComponentDir(layer, i%components), i)
}

// scComponentDir is WinSxS component directory c of layer layer.
func scComponentDir(layer, c int) string {
	kind := "component"
	if layer > 0 {
		kind = "update" + strconv.Itoa(layer)
	}
	return fmt.Sprintf("Files/Windows/WinSxS/amd64_%s-%05d/", kind, c)
}

// scLinkTarget is the file link i of layer points to: hard links spread
// over the layer's files past the hives, as System32 links into WinSxS.
func scLinkTarget(layer, i, files, components int) string {
	dlls := files - len(scHiveFiles)
	return scFileName(layer, len(scHiveFiles)+(i*7)%dlls, components)
}

// scLayerFile is one layer written to disk: its gzip file, digests and plan.
type scLayerFile struct {
	path           string
	digest, diffID v1.Hash
	size           int64 // compressed
	tarSize        int64 // uncompressed
	plan           scLayerPlan
}

// writeServercoreLayer writes layer number layer of plan p to path as a
// gzip tar in the Windows layout (the Hives and Files roots first, every
// entry in PAX format with MSWINDOWS records), with file contents from
// rnd, and returns its digests. It streams: memory stays at a few buffers.
// gzip runs Huffman-only, the fastest level: random content does not
// compress anyway.
func writeServercoreLayer(path string, layer int, p scLayerPlan, rnd io.Reader) (scLayerFile, error) {
	if p.components() < 1 || p.Files <= len(scHiveFiles) || p.Links > p.Files {
		return scLayerFile{}, fmt.Errorf("layer plan %+v is too small", p)
	}
	f, err := os.Create(path)
	if err != nil {
		return scLayerFile{}, err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	digest, diffID := sha256.New(), sha256.New()
	compressed, uncompressed := &countWriter{}, &countWriter{}
	gz, err := gzip.NewWriterLevel(io.MultiWriter(bw, digest, compressed), gzip.HuffmanOnly)
	if err != nil {
		return scLayerFile{}, err
	}
	tw := tar.NewWriter(io.MultiWriter(gz, diffID, uncompressed))
	if err := writeServercoreEntries(tw, layer, p, rnd); err != nil {
		return scLayerFile{}, err
	}
	for _, c := range []io.Closer{tw, gz} {
		if err := c.Close(); err != nil {
			return scLayerFile{}, err
		}
	}
	if err := bw.Flush(); err != nil {
		return scLayerFile{}, err
	}
	if err := f.Close(); err != nil {
		return scLayerFile{}, err
	}
	return scLayerFile{path: path, digest: sha256Hash(digest), diffID: sha256Hash(diffID),
		size: compressed.n, tarSize: uncompressed.n, plan: p}, nil
}

// writeServercoreEntries writes the entries of layer: the fixed
// directories, the hives, each component directory followed by its files,
// and last the hard links under System32.
func writeServercoreEntries(tw *tar.Writer, layer int, p scLayerPlan, rnd io.Reader) error {
	comps := p.components()
	dir := func(name string) error { return scWriteHeader(tw, name, tar.TypeDir, 0, "") }
	file := func(i int) error {
		n := scFileSize(p.Bytes, p.Files, i)
		if err := scWriteHeader(tw, scFileName(layer, i, comps), tar.TypeReg, n, ""); err != nil {
			return err
		}
		_, err := io.CopyN(tw, rnd, n)
		return err
	}
	for _, d := range scFixedDirs {
		if err := dir(d); err != nil {
			return err
		}
	}
	for i := range scHiveFiles {
		if err := file(i); err != nil {
			return err
		}
	}
	// The DLLs of component c are files hives+c, hives+c+comps, ...
	for c := range comps {
		if err := dir(scComponentDir(layer, c)); err != nil {
			return err
		}
		for i := len(scHiveFiles) + c; i < p.Files; i += comps {
			if err := file(i); err != nil {
				return err
			}
		}
	}
	for i := range p.Links {
		name := fmt.Sprintf("Files/Windows/System32/l%07d.dll", i)
		if err := scWriteHeader(tw, name, tar.TypeLink, 0, scLinkTarget(layer, i, p.Files, comps)); err != nil {
			return err
		}
	}
	return nil
}

// scWriteHeader writes one entry's header as BuildKit's Windows differ
// does (regtest's winHeader): PAX format, a creation time, file attributes
// and, below the roots, a security descriptor.
func scWriteHeader(tw *tar.Writer, name string, typ byte, size int64, link string) error {
	h := &tar.Header{Name: name, Typeflag: typ, Size: size, Linkname: link, Mode: 0o644 | 1<<15,
		ModTime: regtest.FixtureTime, Format: tar.FormatPAX}
	root := name == "Hives" || name == "Files"
	h.PAXRecords = map[string]string{
		regtest.PAXCreationTime: fmt.Sprintf("%d.%d", h.ModTime.Unix(), h.ModTime.Nanosecond()),
		regtest.PAXFileAttr:     "32",
	}
	sd := scRawSDFile
	if typ == tar.TypeDir {
		h.Mode = 0o755 | 1<<14
		h.PAXRecords[regtest.PAXFileAttr] = "16"
		sd = scRawSDDir
	}
	if !root {
		h.PAXRecords[regtest.PAXRawSD] = sd
	}
	if err := tw.WriteHeader(h); err != nil {
		return fmt.Errorf("writing tar header %s: %w", name, err)
	}
	return nil
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

func sha256Hash(h hash.Hash) v1.Hash {
	return v1.Hash{Algorithm: "sha256", Hex: fmt.Sprintf("%x", h.Sum(nil))}
}

// scLayer is a layer written by writeServercoreLayer, read from its file.
type scLayer struct{ f scLayerFile }

func (l scLayer) Digest() (v1.Hash, error)            { return l.f.digest, nil }
func (l scLayer) DiffID() (v1.Hash, error)            { return l.f.diffID, nil }
func (l scLayer) Size() (int64, error)                { return l.f.size, nil }
func (l scLayer) MediaType() (types.MediaType, error) { return types.OCILayer, nil }
func (l scLayer) Compressed() (io.ReadCloser, error)  { return os.Open(l.f.path) }

func (l scLayer) Uncompressed() (io.ReadCloser, error) {
	f, err := os.Open(l.f.path)
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{zr, f}, nil
}

// servercoreBase writes the layers of a servercore-shaped base of size
// content bytes and entries tar entries into dir and returns the image (a
// Windows ltsc2025 config with os.version regtest.OSVersionLTSC2025) and
// the layer files, which back the image until they are removed. seed makes
// the random content.
func servercoreBase(dir string, size int64, entries int, seed [32]byte, log io.Writer) (v1.Image, []scLayerFile, error) {
	plans, err := servercorePlan(size, entries, scLayers)
	if err != nil {
		return nil, nil, err
	}
	rnd := rand.NewChaCha8(seed)
	var files []scLayerFile
	var adds []mutate.Addendum
	for i, p := range plans {
		fmt.Fprintf(log, "  layer %d: %d entries (%d directories, %d files, %d hard links), %s content bytes\n",
			i+1, p.entries(), p.Dirs, p.Files, p.Links, thousands(p.Bytes))
		f, err := writeServercoreLayer(filepath.Join(dir, fmt.Sprintf("layer%d.tar.gz", i+1)), i, p, rnd)
		if err != nil {
			return nil, files, err
		}
		files = append(files, f)
		by := "Apply image " + regtest.OSVersionLTSC2025
		if i > 0 {
			by = "Install update " + regtest.OSVersionLTSC2025
		}
		adds = append(adds, mutate.Addendum{Layer: scLayer{f}, History: v1.History{Created: v1.Time{Time: regtest.FixtureTime}, CreatedBy: by}})
	}
	cf := &v1.ConfigFile{
		OS: "windows", Architecture: "amd64", OSVersion: regtest.OSVersionLTSC2025,
		Created: v1.Time{Time: regtest.FixtureTime},
		Config:  v1.Config{User: "ContainerUser", Cmd: []string{`c:\windows\system32\cmd.exe`}},
		RootFS:  v1.RootFS{Type: "layers"},
	}
	img, err := mutate.ConfigFile(empty.Image, cf)
	if err != nil {
		return nil, files, err
	}
	img = mutate.ConfigMediaType(mutate.MediaType(img, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err = mutate.Append(img, adds...)
	return img, files, err
}

// scLayerSummary describes the layer files for the report.
func scLayerSummary(files []scLayerFile) string {
	var parts []string
	for i, f := range files {
		parts = append(parts, fmt.Sprintf("layer %d: %s bytes compressed (%s uncompressed), %s entries: %s directories, %s files, %s hard links",
			i+1, thousands(f.size), thousands(f.tarSize), thousands(int64(f.plan.entries())),
			thousands(int64(f.plan.Dirs)), thousands(int64(f.plan.Files)), thousands(int64(f.plan.Links))))
	}
	return strings.Join(parts, "; ")
}
