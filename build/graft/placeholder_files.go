package graft

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"strings"
)

// PlaceholderFiles are the rootfs paths, lower-cased, of the regular files
// (and hard links) of the placeholder the variant was solved on: content-
// less skeleton files of the base, which a scanner run on the solve's
// result lists as empty files. An SBOM that records the base by reference
// drops them (build's SBOM with base=reference).
func (g *Graft) PlaceholderFiles() (map[string]bool, error) {
	out := map[string]bool{}
	for _, l := range g.skeletonLayers {
		rc, err := l.Uncompressed()
		if err != nil {
			return nil, err
		}
		err = tarFiles(rc, out)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("reading the placeholder: %w", err)
		}
	}
	return out, nil
}

// tarFiles adds the rootfs paths of the Files/ regular files and hard
// links of the Windows layer tar r to out.
func tarFiles(r io.Reader, out map[string]bool) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if h.Typeflag != tar.TypeReg && h.Typeflag != tar.TypeLink {
			continue
		}
		if p, ok := filePath(h.Name); ok && p != "/" {
			out[strings.ToLower(p)] = true
		}
	}
}
