package skeleton

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Why the placeholder is pruned.
//
// A skeleton keeps every entry of its base layer, so that the solve sees
// the tree the real base gives. BuildKit then applies every entry (its
// Windows applier, util/winlayers/applier.go, creates each Files/ entry
// on disk and skips Hives/ and UtilityVM/) and its differ walks the whole
// tree: on a servercore-sized base of 100,000 entries that is most of a
// build's time, whatever else is cached. The stage's layers depend only on
// the tree along the paths the stage writes (lint.BaseWrites: each COPY
// and ADD destination and WORKDIR): their ancestors, which the differ
// writes as parent directories, and what lies below them, which a COPY
// may overwrite or merge into. So the placeholder keeps those entries,
// Files/etc/passwd and Files/etc/group (a USER lookup reads them), the
// targets of kept hard links with their ancestors, and the whiteouts of
// kept paths; the skeletons in the caches stay whole. A kept path that is
// a symbolic link could lead the writes anywhere: then nothing is pruned.
// build/graft_e2e_test.go's TestGraftEquivalence compares a pruned graft
// with BuildKit's plain path, entry for entry.

// errPruneSymlink: a kept entry is a symbolic link.
var errPruneSymlink = errors.New("a path the stage writes goes through a symbolic link")

// pruner decides which skeleton entries a placeholder keeps.
type pruner struct {
	writes []string        // lower-cased, absolute
	links  map[string]bool // hard link targets of kept entries, and their ancestors
}

// newPruner keeps the tree along writes (absolute paths, as
// lint.BaseWrites.Paths gives them). Windows paths are case-insensitive,
// so matching is too: it keeps more, never less.
func newPruner(writes []string) *pruner {
	p := &pruner{links: map[string]bool{}}
	for _, w := range append(writes, "/etc/passwd", "/etc/group") {
		p.writes = append(p.writes, strings.ToLower(path.Clean("/"+w)))
	}
	return p
}

// FilePath is the rootfs path of a Files/ entry, lower-cased, or false
// for an entry outside Files/.
func FilePath(name string) (string, bool) {
	n := strings.TrimSuffix(name, "/")
	if n == "Files" {
		return "/", true
	}
	rest, ok := strings.CutPrefix(n, "Files/")
	if !ok {
		return "", false
	}
	return strings.ToLower(path.Clean("/" + rest)), true
}

// near reports whether rootfs path p is on, above or below a written path.
func (p *pruner) near(fp string) bool {
	if fp == "/" {
		return true
	}
	for _, w := range p.writes {
		if fp == w || strings.HasPrefix(w, fp+"/") || strings.HasPrefix(fp, w+"/") {
			return true
		}
	}
	return false
}

// keeps reports whether the placeholder keeps entry h: the layout's root
// directories, and Files/ entries near a write, a kept link's target or
// its ancestors, and whiteouts of kept paths.
func (p *pruner) keeps(h *tar.Header) bool {
	fp, ok := FilePath(h.Name)
	if !ok {
		n := strings.TrimSuffix(h.Name, "/")
		return n == "Hives" || n == "UtilityVM"
	}
	dir, base := path.Split(fp)
	switch {
	case base == ".wh..wh..opq":
		fp = path.Clean(dir)
	case strings.HasPrefix(base, ".wh."):
		fp = path.Join(dir, strings.TrimPrefix(base, ".wh."))
	}
	return p.near(fp) || p.links[fp]
}

// scan reads skeleton b and records the hard link targets its kept
// entries need; a kept symbolic link fails with errPruneSymlink.
func (p *pruner) scan(b []byte) error {
	return eachEntry(b, func(h *tar.Header, _ io.Reader) error {
		if !p.keeps(h) {
			return nil
		}
		switch h.Typeflag {
		case tar.TypeSymlink:
			return fmt.Errorf("%w: %s", errPruneSymlink, h.Name)
		case tar.TypeLink:
			if t, ok := FilePath(h.Linkname); ok {
				for ; t != "/"; t = path.Dir(t) {
					p.links[t] = true
				}
			}
		}
		return nil
	})
}

// prune writes the entries of skeleton b that the placeholder keeps, in
// order, gzip-compressed as writeSkeletonTar writes a skeleton.
func (p *pruner) prune(b []byte) ([]byte, error) {
	var out bytes.Buffer
	zw, err := gzip.NewWriterLevel(&out, gzip.DefaultCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(zw)
	err = eachEntry(b, func(h *tar.Header, r io.Reader) error {
		if !p.keeps(h) {
			return nil
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err := io.Copy(tw, r)
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// eachEntry calls fn with every entry of the gzip tar b.
func eachEntry(b []byte, fn func(*tar.Header, io.Reader) error) error {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return err
	}
	return EachTarEntry(zr, fn)
}

// EachTarEntry calls fn with every entry of the tar stream r, its header
// and its content, in order, until the end of the tar or the first error.
func EachTarEntry(r io.Reader, fn func(*tar.Header, io.Reader) error) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(h, tr); err != nil {
			return err
		}
	}
}

// Prune returns the placeholder's layers for skeletons (one per
// base layer, in order) and the paths the stage writes: each pruned, as
// one pruner over all layers (a hard link may name a file of a lower
// layer). ok is false, with the skeletons returned whole, when a kept
// path is a symbolic link.
func Prune(skeletons [][]byte, writes []string) (out [][]byte, ok bool, err error) {
	p := newPruner(writes)
	for _, b := range skeletons {
		if err := p.scan(b); errors.Is(err, errPruneSymlink) {
			return skeletons, false, nil
		} else if err != nil {
			return nil, false, err
		}
	}
	for _, b := range skeletons {
		pb, err := p.prune(b)
		if err != nil {
			return nil, false, err
		}
		out = append(out, pb)
	}
	return out, true, nil
}

// PruneKey names the placeholder pruned to paths for a base of layers: a
// digest of the skeleton format, the layers (a hard link may name a file
// of a lower layer) and the paths, cut to 16 hex digits.
func PruneKey(layers []v1.Descriptor, paths []string) string {
	h := sha256.New()
	fmt.Fprintf(h, "imgctl prune v1\nformat %s\n", Format)
	for _, l := range layers {
		fmt.Fprintf(h, "layer %s\n", l.Digest)
	}
	ps := slices.Clone(paths)
	slices.Sort(ps)
	for _, p := range slices.Compact(ps) {
		fmt.Fprintf(h, "path %q\n", p)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
