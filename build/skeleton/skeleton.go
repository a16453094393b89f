package skeleton

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	kgzip "github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/imgctl/imgctl/registry"
)

// Maker makes and caches the skeleton of Windows base layers: the
// layer's tar with every entry kept, header and all (names, types, modes,
// owners, times, PAX records, links), and every file's content left out.
// A solve on a placeholder base made of skeletons (package graft) sees the
// directory tree BuildKit would unpack from the real base, so its COPY,
// ADD and WORKDIR produce the layers a solve on the real base produces:
// BuildKit's Windows differ writes parent directories from what is on
// disk, and a skeleton puts the same metadata there. Contents are never
// read by a stage without RUN.
//
// A skeleton is made by streaming the base layer once (nothing of it is
// written to disk) and is cached under the user's cache directory by the
// base layer's digest: Windows bases change monthly, and each month's
// layers are read once per machine. gzip without a name or time keeps a
// skeleton's digest the same from machine to machine, so a builder's cache
// of the placeholder holds across hosts.
type Maker struct {
	dir string // cache directory; "" caches nothing
	// Cache is the skeleton cache in a registry, read after the local
	// cache and written when a skeleton is made; nil has none.
	Cache *RegistryCache

	mu    sync.Mutex
	inUse map[v1.Hash]*sync.Mutex // one maker per layer at a time
	read  int64                   // base layer bytes read to make skeletons
}

// CacheDir is where skeletons are cached: $XDG_CACHE_HOME/imgctl/
// windows-skeletons-v1 (os.UserCacheDir; v1 is the skeleton format, see
// writeSkeletonTar), or nothing when there is no cache directory.
func CacheDir() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "imgctl", "windows-skeletons-v1")
}

// NewMaker makes and caches skeletons in dir (CacheDir); ""
// caches nothing.
func NewMaker(dir string) *Maker {
	return &Maker{dir: dir, inUse: map[v1.Hash]*sync.Mutex{}}
}

// BytesRead is how many base layer bytes were read to make skeletons.
func (s *Maker) BytesRead() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.read
}

// lock serialises the work on base layer h: two variants on one base
// make its skeleton once.
func (s *Maker) lock(h v1.Hash) func() {
	s.mu.Lock()
	m, ok := s.inUse[h]
	if !ok {
		m = &sync.Mutex{}
		s.inUse[h] = m
	}
	s.mu.Unlock()
	m.Lock()
	return m.Unlock
}

// cached is the skeleton of base layer h from the cache, read into memory
// once: another process may replace the file meanwhile.
func (s *Maker) cached(h v1.Hash) (v1.Layer, bool) { return s.cachedAt(entryKey{h: h}) }

// cachedAt is cached for entry k: a whole skeleton or a pruned one.
func (s *Maker) cachedAt(k entryKey) (v1.Layer, bool) {
	if s.dir == "" {
		return nil, false
	}
	b, err := os.ReadFile(s.pathOf(k))
	if err != nil {
		return nil, false
	}
	l, err := bytesLayer(b)
	if err != nil {
		return nil, false
	}
	if _, err := l.DiffID(); err != nil { // a torn or foreign file: make it again
		return nil, false
	}
	return l, true
}

// known returns a skeleton of base layer h made before: from the local
// cache, else from the registry cache (Cache), which is then kept locally
// too. The caller holds the layer's lock.
func (s *Maker) known(ctx context.Context, h v1.Hash) (v1.Layer, bool) {
	if l, ok := s.cached(h); ok {
		return l, true
	}
	if s.Cache == nil {
		return nil, false
	}
	b, ok := s.Cache.Get(ctx, h)
	if !ok {
		return nil, false
	}
	l, err := s.store(h, b)
	return l, err == nil
}

// made keeps skeleton b, made by reading base layer d, in the local cache
// and the registry cache. The caller holds the layer's lock.
func (s *Maker) made(ctx context.Context, d v1.Descriptor, b []byte) (v1.Layer, error) {
	s.mu.Lock()
	s.read += d.Size
	s.mu.Unlock()
	l, err := s.store(d.Digest, b)
	if err == nil && s.Cache != nil {
		s.Cache.Put(ctx, d.Digest, b)
	}
	return l, err
}

// Layer returns the skeleton of base layer d of repository repo: one made
// before (known), or made by reading the layer and then cached.
func (s *Maker) Layer(ctx context.Context, rc *registry.Client, repo name.Repository, d v1.Descriptor) (v1.Layer, error) {
	defer s.lock(d.Digest)()
	if l, ok := s.known(ctx, d.Digest); ok {
		return l, nil
	}
	base, err := rc.Layer(ctx, repo.Digest(d.Digest.String()))
	if err != nil {
		return nil, err
	}
	return s.make(ctx, base, d)
}

// make reads base, layer d, and keeps its skeleton; the caller holds the
// layer's lock.
func (s *Maker) make(ctx context.Context, base v1.Layer, d v1.Descriptor) (v1.Layer, error) {
	var buf bytes.Buffer
	if err := writeSkeleton(&buf, base); err != nil {
		return nil, fmt.Errorf("reading the directory tree of base layer %s: %w", d.Digest, err)
	}
	return s.made(ctx, d, buf.Bytes())
}

// CopyLayer streams base layer d of repository repo into cp's repository,
// across registries, and makes its skeleton from the same stream, so that
// the layer crosses once and is read once. copied reports that the layer
// is now in cp's repository; when the skeleton was known it is not, and
// the caller copies it.
func (s *Maker) CopyLayer(ctx context.Context, rc *registry.Client, cp *registry.Copier, repo name.Repository, d v1.Descriptor) (sk v1.Layer, copied bool, err error) {
	defer s.lock(d.Digest)()
	if l, ok := s.known(ctx, d.Digest); ok {
		return l, false, nil
	}
	base, err := rc.Layer(ctx, repo.Digest(d.Digest.String()))
	if err != nil {
		return nil, false, err
	}
	l, err := s.copyFrom(ctx, base, cp, repo, d)
	return l, err == nil, err
}

// FromBuilder is the skeleton of base layer d, read from the builder's
// content store (content.DaemonLayer) as base, and puts the layer into cp's
// repository unless present says it is there: one stream does both, as
// CopyLayer's.
func (s *Maker) FromBuilder(ctx context.Context, base v1.Layer, cp *registry.Copier, from name.Repository, d v1.Descriptor, present bool) (v1.Layer, error) {
	defer s.lock(d.Digest)()
	l, ok := s.known(ctx, d.Digest)
	switch {
	case ok && present:
		return l, nil
	case ok:
		return l, cp.Blob(ctx, base, from)
	case present:
		return s.make(ctx, base, d)
	}
	return s.copyFrom(ctx, base, cp, from, d)
}

// copyFrom streams base, layer d of repository from, into cp's repository
// and makes its skeleton from the same stream. When the upload read
// nothing (the target held the layer) or was retried, the skeleton is
// made from a read of its own. The caller holds the layer's lock.
func (s *Maker) copyFrom(ctx context.Context, base v1.Layer, cp *registry.Copier, from name.Repository, d v1.Descriptor) (v1.Layer, error) {
	pr, pw := io.Pipe()
	var buf bytes.Buffer
	made := make(chan error, 1)
	go func() {
		err := writeSkeletonStream(&buf, pr)
		_ = pr.CloseWithError(err) // a failed skeleton must not stall the upload
		made <- err
	}()
	err := cp.Blob(ctx, &teeLayer{Layer: base, w: pw}, from)
	_ = pw.CloseWithError(io.ErrUnexpectedEOF) // no-op after a full first read: the tee closed it
	mkErr := <-made
	if err != nil {
		return nil, err
	}
	if mkErr != nil {
		return s.make(ctx, base, d)
	}
	return s.made(ctx, d, buf.Bytes())
}

// teeLayer is a layer whose first compressed stream is copied to w as it
// is read, w closed at its end. A second stream (go-containerregistry's
// retry, or a redirect) is not copied: w is closed with an error, and the
// skeleton is made apart.
type teeLayer struct {
	v1.Layer
	w      *io.PipeWriter
	opened bool
}

// Compressed tees the layer's first compressed stream into w.
func (t *teeLayer) Compressed() (io.ReadCloser, error) {
	rc, err := t.Layer.Compressed()
	if err != nil {
		return nil, err
	}
	if t.opened {
		_ = t.w.CloseWithError(errStreamRetried)
		return rc, nil
	}
	t.opened = true
	return &teeReadCloser{rc: rc, w: t.w}, nil
}

// errStreamRetried ends a skeleton whose stream was opened again.
var errStreamRetried = errors.New("the layer's stream was opened again")

type teeReadCloser struct {
	rc io.ReadCloser
	w  *io.PipeWriter
}

func (t *teeReadCloser) Read(p []byte) (int, error) {
	n, err := t.rc.Read(p)
	if n > 0 {
		_, _ = t.w.Write(p[:n]) // a skeleton that failed does not stop the upload
	}
	if errors.Is(err, io.EOF) {
		_ = t.w.Close()
	}
	return n, err
}

func (t *teeReadCloser) Close() error { return t.rc.Close() }

// store caches skeleton b of base layer h (best effort: a cache that
// cannot be written costs the next build a read) and returns it as a layer.
func (s *Maker) store(h v1.Hash, b []byte) (v1.Layer, error) { return s.storeAt(entryKey{h: h}, b) }

// storeAt is store for entry k.
func (s *Maker) storeAt(k entryKey, b []byte) (v1.Layer, error) {
	if s.dir != "" && os.MkdirAll(s.dir, 0o755) == nil {
		if f, err := os.CreateTemp(s.dir, ".skeleton-*"); err == nil {
			_, werr := f.Write(b)
			if cerr := f.Close(); werr != nil || cerr != nil || os.Rename(f.Name(), s.pathOf(k)) != nil {
				_ = os.Remove(f.Name())
			}
		}
	}
	return bytesLayer(b)
}

// bytesLayer is a gzip-compressed skeleton held in memory as an OCI layer.
func bytesLayer(b []byte) (v1.Layer, error) {
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil },
		tarball.WithMediaType(types.OCILayer))
}

// path is where the skeleton of base layer h is cached.
func (s *Maker) path(h v1.Hash) string { return s.pathOf(entryKey{h: h}) }

// pathOf is where entry k is cached: path, with -pKEY for a pruned one.
func (s *Maker) pathOf(k entryKey) string {
	n := k.h.Algorithm + "-" + k.h.Hex
	if k.pruned != "" {
		n += "-p" + k.pruned
	}
	return filepath.Join(s.dir, n+".tar.gz")
}

// Pruned returns the placeholder layer of base layer h pruned with key,
// made before: from the local cache, else the registry cache (then kept
// locally too).
func (s *Maker) Pruned(ctx context.Context, h v1.Hash, key string) (v1.Layer, bool) {
	k := entryKey{h: h, pruned: key}
	if l, ok := s.cachedAt(k); ok {
		return l, true
	}
	if s.Cache == nil {
		return nil, false
	}
	b, ok := s.Cache.GetPruned(ctx, h, key)
	if !ok {
		return nil, false
	}
	l, err := s.storeAt(k, b)
	return l, err == nil
}

// KeepPruned keeps placeholder layer b, base layer h pruned with key, in
// the local cache and the registry cache.
func (s *Maker) KeepPruned(ctx context.Context, h v1.Hash, key string, b []byte) (v1.Layer, error) {
	l, err := s.storeAt(entryKey{h: h, pruned: key}, b)
	if err == nil && s.Cache != nil {
		s.Cache.PutPruned(ctx, h, key, b)
	}
	return l, err
}

// keptFiles are the files whose content a skeleton keeps (see
// writeSkeletonTar); one larger than maxKeptFile, or a hard link, makes
// the skeleton fail, and the variant takes the plain path.
var keptFiles = map[string]bool{"Files/etc/passwd": true, "Files/etc/group": true}

const maxKeptFile = 1 << 20

// writeSkeleton writes the skeleton of base to w, gzip-compressed.
func writeSkeleton(w io.Writer, base v1.Layer) error {
	// go-containerregistry checks the blob's digest when its compressed
	// stream is read to its end. The stream is read ahead in a goroutine
	// (the network and the digest on one core, gunzip and tar on the
	// other), as crane blob | gunzip runs in two processes.
	rc, err := base.Compressed()
	if err != nil {
		return err
	}
	defer rc.Close()
	pr, pw := io.Pipe()
	go func() {
		_, err := io.CopyBuffer(pw, rc, make([]byte, 1<<20))
		_ = pw.CloseWithError(err)
	}()
	defer pr.Close() // ends the copy when the skeleton fails first
	return writeSkeletonStream(w, pr)
}

// writeSkeletonStream writes the skeleton of a layer's compressed stream r
// to w. The stream is decompressed here because it is a pipe, not a
// layer go-containerregistry could open: gzip and zstd by their magic
// numbers (compress/gzip, klauspost's zstd), anything else as a plain tar.
func writeSkeletonStream(w io.Writer, r io.Reader) error {
	br := bufio.NewReaderSize(r, 1<<20)
	magic, _ := br.Peek(4)
	var ur io.Reader = br
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		zr, err := kgzip.NewReader(br) // klauspost's inflate: faster than compress/gzip's, same stream
		if err != nil {
			return err
		}
		defer zr.Close()
		ur = zr
	case bytes.HasPrefix(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		zr, err := zstd.NewReader(br)
		if err != nil {
			return err
		}
		defer zr.Close()
		ur = zr
	}
	return writeSkeletonTar(w, ur)
}

// writeSkeletonTar writes the skeleton of the tar stream ur to w,
// gzip-compressed, and reads ur to its end. gzip's default level: on the
// 150 MB of tar headers of a servercore-sized layer (100,000 entries with
// Windows PAX records) it takes about 1 s for 3.7 MB, where the best level
// takes 10 s for 3.2 MB, on the build's critical path.
func writeSkeletonTar(w io.Writer, ur io.Reader) error {
	zw, err := gzip.NewWriterLevel(w, gzip.DefaultCompression)
	if err != nil {
		return err
	}
	tr, tw := tar.NewReader(ur), tar.NewWriter(zw)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		var keep []byte
		if h.Typeflag == tar.TypeReg || h.Typeflag == tar.TypeRegA {
			// Files/etc/passwd and group keep their content: a WORKDIR
			// with USER set looks the user up there (BuildKit's
			// solver/llbsolver/ops/user_linux.go), on the base's tree.
			if keptFiles[h.Name] {
				if h.Size > maxKeptFile {
					return fmt.Errorf("%s is %d bytes, more than a skeleton carries", h.Name, h.Size)
				}
				if keep, err = io.ReadAll(tr); err != nil {
					return err
				}
			}
			h.Size = int64(len(keep))
		}
		if h.Typeflag == tar.TypeLink && keptFiles[h.Name] {
			return fmt.Errorf("%s is a hard link, whose content a skeleton does not carry", h.Name)
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(keep); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if _, err := io.Copy(io.Discard, ur); err != nil {
		return err
	}
	return zw.Close()
}
