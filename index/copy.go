package index

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/sync/errgroup"
)

func (c *copier) image(ctx context.Context, e *Entry, dst name.Digest) error {
	img, err := e.img()
	if err != nil {
		return err
	}
	ls, err := img.Layers()
	if err != nil {
		return fmt.Errorf("reading layers of %s: %w", e.Source, err)
	}
	cl, err := partial.ConfigLayer(img)
	if err != nil {
		return fmt.Errorf("reading config of %s: %w", e.Source, err)
	}
	g, gctx := errgroup.WithContext(ctx)
	for _, l := range append(ls, cl) {
		g.Go(func() error { return c.blob(gctx, e, l) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if err := c.put(ctx, dst, img); err != nil {
		return fmt.Errorf("pushing manifest %s: %w", dst, err)
	}
	return nil
}

// blob mounts (same registry) or streams (other registry) one blob, at most
// Jobs at a time across all children. Foreign layers are skipped.
func (c *copier) blob(ctx context.Context, e *Entry, l v1.Layer) error {
	if err := c.blobs.Acquire(ctx, 1); err != nil {
		return err
	}
	defer c.blobs.Release(1)
	mt, err := l.MediaType()
	if err != nil || !mt.IsDistributable() {
		return err
	}
	d, err := l.Digest()
	if err != nil {
		return fmt.Errorf("reading blob digest of %s: %w", e.Source, err)
	}
	if src := e.Source.Context(); c.direct != nil && mountable(src, c.repo) && c.direct.mount(ctx, d, src) {
		return nil
	}
	p, err := c.getPusher()
	if err == nil {
		err = p.Upload(ctx, c.repo, l)
	}
	if err != nil {
		return fmt.Errorf("copying blob %s of %s: %w", d, e.Source, err)
	}
	return nil
}

// manifest is what put needs of a v1.Image or rawManifest.
type manifest interface {
	RawManifest() ([]byte, error)
	MediaType() (types.MediaType, error)
}

// put PUTs a manifest with its exact bytes, by the direct client when there
// is one, falling back to the Pusher (which retries).
func (c *copier) put(ctx context.Context, ref name.Reference, m manifest) error {
	if c.direct != nil {
		raw, err := m.RawManifest()
		if err != nil {
			return err
		}
		mt, err := m.MediaType()
		if err != nil {
			return err
		}
		err = c.direct.put(ctx, ref.Identifier(), mt, raw)
		if err == nil {
			return nil
		}
		c.s.log.Debug("direct manifest PUT failed; retrying with the Pusher", "ref", ref.String(), "err", err)
	}
	p, err := c.getPusher()
	if err != nil {
		return err
	}
	return p.Put(ctx, ref, m)
}
