package policy

import (
	"archive/tar"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/snapshot"
	"github.com/imgctl/imgctl/verify"
)

// readLayers reads, for verify --layers, the own layers of every Windows
// image of s in repo: those after its base's layers, the base known by the
// org.opencontainers.image.base.name and .base.digest annotations (of the
// manifest, else of its index descriptor). It reads every tar entry of
// them for verify.LayerLayout. An image without those annotations, or
// whose layers do not start with its base's, is left unchecked: its
// layers may be the whole multi-gigabyte base. Foreign layers are never
// read. A registry error is returned.
func (g *Gate) readLayers(ctx context.Context, repo name.Repository, s *snapshot.Snapshot) (*verify.Layers, error) {
	rc := registry.Or(g.Registry)
	out := &verify.Layers{}
	for i := range s.Entries {
		e := &s.Entries[i]
		if p := e.Platform(); e.Manifest == nil || e.IsAttestation() || p == nil || p.OS != "windows" {
			continue
		}
		own, why, err := ownLayers(ctx, rc, e)
		if err != nil {
			return nil, err
		}
		if why != "" {
			out.Unchecked = append(out.Unchecked, verify.UncheckedImage{Manifest: e.Descriptor.Digest, Reason: why})
			continue
		}
		for _, l := range own {
			if l.MediaType == types.DockerForeignLayer || len(l.URLs) > 0 || !l.MediaType.IsDistributable() {
				continue
			}
			cl := verify.CheckedLayer{Manifest: e.Descriptor.Digest, Layer: l.Digest}
			n, err := readEntries(ctx, rc, repo.Digest(l.Digest.String()), &cl.Layout)
			out.Stats.Read++
			out.Stats.Bytes += n
			if err != nil {
				return nil, err
			}
			out.Checked = append(out.Checked, cl)
		}
	}
	return out, nil
}

// ownLayers returns the layers of e after its base's, or why they are
// not known.
func ownLayers(ctx context.Context, rc *registry.Client, e *snapshot.Entry) ([]v1.Descriptor, string, error) {
	ma, da := e.Manifest.Annotations, e.Descriptor.Annotations
	baseName := cmp.Or(ma[snapshot.AnnotationBaseName], da[snapshot.AnnotationBaseName])
	baseDigest := cmp.Or(ma[snapshot.AnnotationBaseDigest], da[snapshot.AnnotationBaseDigest])
	if baseName == "" || baseDigest == "" {
		return nil, fmt.Sprintf("no %s and %s annotations, so the base's layers are not known and every layer, the base's gigabytes too, would be read",
			snapshot.AnnotationBaseName, snapshot.AnnotationBaseDigest), nil
	}
	ref, err := name.ParseReference(baseName, rc.NameOptions()...)
	if err != nil {
		return nil, fmt.Sprintf("base name %q: %v", baseName, err), nil
	}
	h, err := v1.NewHash(baseDigest)
	if err != nil {
		return nil, fmt.Sprintf("base digest %q: %v", baseDigest, err), nil
	}
	base, why, err := baseManifest(ctx, rc, ref.Context().Digest(h.String()), e.Platform())
	if err != nil || why != "" {
		return nil, why, err
	}
	layers := e.Manifest.Layers
	if len(base.Layers) > len(layers) || !slices.EqualFunc(base.Layers, layers[:len(base.Layers)],
		func(a, b v1.Descriptor) bool { return a.Digest == b.Digest }) {
		return nil, fmt.Sprintf("the layers do not start with those of its base %s@%s", ref.Context(), h), nil
	}
	return layers[len(base.Layers):], "", nil
}

// baseManifest reads the base manifest at ref; for an index, its child for
// want: the same os/arch/variant and os.version, else the same build.
func baseManifest(ctx context.Context, rc *registry.Client, ref name.Digest, want *v1.Platform) (*v1.Manifest, string, error) {
	desc, err := rc.Get(ctx, ref)
	if err != nil {
		return nil, "", err
	}
	if desc.MediaType.IsIndex() {
		_, im, err := registry.ReadIndex(ref, desc)
		if err != nil {
			return nil, "", fmt.Errorf("reading base %s: %w", ref, err)
		}
		child, same, ok := platform.BaseChild(im.Manifests, *want)
		if !ok || !same {
			return nil, fmt.Sprintf("its base index %s has no %s image", ref, platform.Format(*want)), nil
		}
		if desc, err = rc.Get(ctx, ref.Context().Digest(child.Digest.String())); err != nil {
			return nil, "", err
		}
	}
	img, err := desc.Image()
	if err != nil {
		return nil, "", fmt.Errorf("reading base %s: %w", ref, err)
	}
	m, err := img.Manifest()
	if err != nil {
		return nil, "", fmt.Errorf("reading base %s: %w", ref, err)
	}
	return m, "", nil
}

// readEntries reads the layer at ref to its end, gzip, zstd or plain tar
// (go-containerregistry's Uncompressed tells them apart), adds every tar
// entry name to l and returns the compressed bytes read. Reading to the
// end lets the fetcher check the digest.
func readEntries(ctx context.Context, rc *registry.Client, ref name.Digest, l *verify.LayerLayout) (int64, error) {
	rl, err := rc.Layer(ctx, ref)
	if err != nil {
		return 0, err
	}
	cl := &countedLayer{Layer: rl}
	ul, err := partial.CompressedToLayer(cl)
	if err != nil {
		return 0, fmt.Errorf("reading layer %s: %w", ref, err)
	}
	rd, err := ul.Uncompressed()
	if err != nil {
		return cl.n, fmt.Errorf("reading layer %s: %w", ref, err)
	}
	defer rd.Close()
	tr := tar.NewReader(rd)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return cl.n, fmt.Errorf("reading layer %s: %w", ref, err)
		}
		l.Add(h.Name)
	}
	// The rest of the tar, then of the compressed stream (a decompressor
	// may stop before its end): at its end the fetcher checks the digest.
	if _, err := io.Copy(io.Discard, rd); err != nil {
		return cl.n, fmt.Errorf("reading layer %s: %w", ref, err)
	}
	if _, err := io.Copy(io.Discard, cl.rd); err != nil {
		return cl.n, fmt.Errorf("reading layer %s: %w", ref, err)
	}
	return cl.n, nil
}

// countedLayer is a layer whose Compressed stream counts the bytes read
// from it; partial.CompressedToLayer builds Uncompressed on it, so that is
// counted too.
type countedLayer struct {
	v1.Layer
	n  int64
	rd *countingReader // the stream Compressed opened last
}

// Compressed returns the layer's compressed stream, counted.
func (c *countedLayer) Compressed() (io.ReadCloser, error) {
	rc, err := c.Layer.Compressed()
	if err != nil {
		return nil, err
	}
	c.rd = &countingReader{ReadCloser: rc, n: &c.n}
	return c.rd, nil
}

// countingReader adds the bytes read through it to *n. Hand-written: neither
// the standard library nor go-containerregistry counts a blob's bytes, and
// registry.Client counts requests only.
type countingReader struct {
	io.ReadCloser
	n *int64
}

func (r *countingReader) Read(p []byte) (int, error) {
	k, err := r.ReadCloser.Read(p)
	*r.n += int64(k)
	return k, err
}
