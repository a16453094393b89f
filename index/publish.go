package index

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"
)

// rawManifest is a manifest PUT with its exact bytes.
type rawManifest struct {
	raw []byte
	mt  types.MediaType
}

func (r rawManifest) RawManifest() ([]byte, error)        { return r.raw, nil }
func (r rawManifest) MediaType() (types.MediaType, error) { return r.mt, nil }

// publish copies every child into the target repository, then PUTs the
// index: nothing is tagged unless every child is present.
func (s *session) publish(ctx context.Context, target name.Tag, plan *Plan, res *Result) error {
	c := &copier{s: s, repo: target.Context(), direct: s.direct, blobs: semaphore.NewWeighted(int64(s.o.jobs()))}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.o.jobs())
	for _, e := range plan.Entries {
		g.Go(func() error { return c.child(gctx, e) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	res.Copied, res.Present = int(c.copied.Load()), int(c.present.Load())
	if err := c.put(ctx, target, rawManifest{plan.Raw, plan.Manifest.MediaType}); err != nil {
		return fmt.Errorf("pushing index %s: %w", target, err)
	}
	s.log.Debug("pushed index", "ref", target.String(), "digest", plan.Digest.String(),
		"copied", res.Copied, "present", res.Present)
	return nil
}

// copier copies children into one repository: blobs are mounted by the
// direct client where it can, otherwise by one Pusher, which deduplicates
// blobs by digest and authenticates once.
type copier struct {
	s       *session
	repo    name.Repository
	direct  *direct
	blobs   *semaphore.Weighted
	copied  atomic.Int64
	present atomic.Int64

	once   sync.Once
	pusher *remote.Pusher
	err    error
}

func (c *copier) getPusher() (*remote.Pusher, error) {
	c.once.Do(func() { c.pusher, c.err = remote.NewPusher(c.s.o.Remote...) })
	return c.pusher, c.err
}

// child makes one child present in the target repository: nothing when it
// was read from there or a HEAD finds it; otherwise its blobs are mounted or
// streamed and its manifest is PUT with its exact bytes.
func (c *copier) child(ctx context.Context, e *Entry) error {
	dst := c.repo.Digest(e.Descriptor.Digest.String())
	if e.inTarget {
		c.present.Add(1)
		return nil
	}
	got, err := c.s.head(ctx, dst)
	if err != nil {
		return err
	}
	if got != nil {
		c.s.log.Debug("child present", "digest", dst.DigestStr())
		c.present.Add(1)
		return nil
	}
	switch mt := e.Descriptor.MediaType; {
	case mt.IsIndex():
		err = c.index(ctx, e, dst)
	case mt.IsImage():
		err = c.image(ctx, e, dst)
	default:
		err = fmt.Errorf("%s: %w %q", e.Source, ErrUnsupportedMediaType, mt)
	}
	if err != nil {
		return err
	}
	c.copied.Add(1)
	c.s.log.Debug("copied child", "from", e.Source.String(), "to", dst.String())
	return nil
}

// index copies a nested index with the Pusher, which walks its children.
func (c *copier) index(ctx context.Context, e *Entry, dst name.Digest) error {
	desc, err := c.s.puller.Get(ctx, e.Source)
	if err != nil {
		return fmt.Errorf("fetching index %s: %w", e.Source, err)
	}
	p, err := c.getPusher()
	if err == nil {
		err = p.Push(ctx, dst, desc)
	}
	if err != nil {
		return fmt.Errorf("copying index %s: %w", e.Source, err)
	}
	return nil
}
