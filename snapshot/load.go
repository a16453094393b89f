package snapshot

import (
	"context"
	"errors"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sync/errgroup"
)

// DefaultConcurrency bounds concurrent manifest and config fetches.
const DefaultConcurrency = 8

// LoadIndex reads an index, its child manifests and their configs, at most
// concurrency at a time. Attestation manifests and nested indexes are not
// opened. It never reads a layer.
func LoadIndex(ctx context.Context, idx v1.ImageIndex, concurrency int) (*Snapshot, error) {
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("reading index: %w", err)
	}
	d, err := idx.Digest()
	if err != nil {
		return nil, fmt.Errorf("reading index digest: %w", err)
	}
	s := &Snapshot{Digest: d, Index: im, Entries: make([]Entry, len(im.Manifests))}
	if concurrency <= 0 {
		concurrency = DefaultConcurrency
	}
	// Each distinct child is read once: an index may list one manifest
	// many times, and opening a child of a remote index costs a parse of
	// the whole index.
	children := map[v1.Hash]*child{}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(concurrency)
	for i, desc := range im.Manifests {
		s.Entries[i].Descriptor = desc
		if !desc.MediaType.IsImage() || s.Entries[i].IsAttestation() || children[desc.Digest] != nil {
			continue
		}
		c := &child{}
		children[desc.Digest] = c
		g.Go(func() error { return c.load(gctx, idx, desc.Digest) })
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for i := range s.Entries {
		e := &s.Entries[i]
		c := children[e.Descriptor.Digest]
		if c == nil || !e.Descriptor.MediaType.IsImage() || e.IsAttestation() {
			continue
		}
		if c.size != e.Descriptor.Size {
			return nil, fmt.Errorf("manifest %s: %w: the descriptor says %d bytes, the registry served %d",
				e.Descriptor.Digest, ErrSizeMismatch, e.Descriptor.Size, c.size)
		}
		e.Manifest, e.Config = c.entry.Manifest, c.entry.Config
	}
	return s, nil
}

// child is one distinct child manifest of an index, as read.
type child struct {
	size  int64
	entry Entry
}

func (c *child) load(ctx context.Context, idx v1.ImageIndex, h v1.Hash) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	img, err := idx.Image(h)
	if err != nil {
		return fmt.Errorf("opening manifest %s: %w", h, err)
	}
	raw, err := img.RawManifest()
	if err != nil {
		return fmt.Errorf("reading manifest %s: %w", h, err)
	}
	c.size = int64(len(raw))
	if c.entry, err = readImage(img); err != nil {
		return fmt.Errorf("manifest %s: %w", h, err)
	}
	return nil
}

// LoadImage reads a single-platform manifest and its config.
func LoadImage(img v1.Image) (*Snapshot, error) {
	e, err := readImage(img)
	if err != nil {
		return nil, err
	}
	d, err := img.Digest()
	if err != nil {
		return nil, fmt.Errorf("reading digest: %w", err)
	}
	mt, err := img.MediaType()
	if err != nil {
		return nil, fmt.Errorf("reading media type: %w", err)
	}
	sz, err := img.Size()
	if err != nil {
		return nil, fmt.Errorf("reading size: %w", err)
	}
	e.Descriptor = v1.Descriptor{MediaType: mt, Digest: d, Size: sz}
	return &Snapshot{Digest: d, Entries: []Entry{e}}, nil
}

func readImage(img v1.Image) (Entry, error) {
	m, err := img.Manifest()
	if err != nil {
		return Entry{}, fmt.Errorf("reading manifest: %w", err)
	}
	if err := checkSize("config", m.Config, img.RawConfigFile); err != nil {
		return Entry{}, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return Entry{}, fmt.Errorf("reading config %s: %w", m.Config.Digest, err)
	}
	return Entry{Manifest: m, Config: cf}, nil
}

// ErrSizeMismatch is returned when a descriptor's size is not the size of
// the content it points at: engines refuse to pull such an index.
var ErrSizeMismatch = errors.New("descriptor size does not match the content")

// checkSize compares a descriptor's size with the bytes raw returns.
func checkSize(what string, d v1.Descriptor, raw func() ([]byte, error)) error {
	b, err := raw()
	if err != nil {
		return fmt.Errorf("reading %s %s: %w", what, d.Digest, err)
	}
	if int64(len(b)) != d.Size {
		return fmt.Errorf("%s %s: %w: the descriptor says %d bytes, the registry served %d", what, d.Digest, ErrSizeMismatch, d.Size, len(b))
	}
	return nil
}
