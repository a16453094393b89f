package graft

import (
	"archive/tar"
	"fmt"
	"io"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/build/content"
	"github.com/imgctl/imgctl/build/skeleton"
)

// PlaceholderFiles are the rootfs paths, lower-cased, of the regular files
// (and hard links) of the placeholder the variant was solved on: content-
// less skeleton files of the base, which a scanner run on the solve's
// result lists as files of the image. An SBOM that records the base by
// reference drops those the stage did not write (build's SBOM with
// base=reference).
func (g *Graft) PlaceholderFiles() (map[string]bool, error) {
	out := map[string]bool{}
	for _, l := range g.skeletonLayers {
		if err := LayerFiles(l, out); err != nil {
			return nil, fmt.Errorf("reading the placeholder: %w", err)
		}
	}
	return out, nil
}

// StageLayers are the grafted image img's own layers: those above the
// base's.
func (g *Graft) StageLayers(img content.ExportedImage) []v1.Descriptor {
	if len(img.Layers) < len(g.layers) {
		return nil
	}
	return img.Layers[len(g.layers):]
}

// LayerFiles adds to out the rootfs paths, lower-cased, of the regular
// files and hard links of the Windows layer l (its Files/ entries).
func LayerFiles(l v1.Layer, out map[string]bool) error {
	rc, err := l.Uncompressed()
	if err != nil {
		return err
	}
	defer rc.Close()
	return tarFiles(rc, out)
}

// tarFiles adds the rootfs paths of the Files/ regular files and hard
// links of the Windows layer tar r to out.
func tarFiles(r io.Reader, out map[string]bool) error {
	return skeleton.EachTarEntry(r, func(h *tar.Header, _ io.Reader) error {
		if h.Typeflag != tar.TypeReg && h.Typeflag != tar.TypeLink {
			return nil
		}
		if p, ok := skeleton.FilePath(h.Name); ok && p != "/" {
			out[strings.ToLower(p)] = true
		}
		return nil
	})
}
