package index

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/google/go-containerregistry/pkg/name"
	"golang.org/x/sync/errgroup"

	"github.com/imgctl/imgctl/registry"
)

// publish makes every child present in the target repository, then PUTs
// the index at each tag (registry.PublishTags): nothing is tagged unless every child is
// present.
func (s *session) publish(ctx context.Context, tags []name.Tag, plan *Plan, res *Result) error {
	var copied, present atomic.Int64
	err := s.rc.PublishTags(ctx, tags, registry.RawManifest{Raw: plan.Raw, Type: plan.Manifest.MediaType}, func(ctx context.Context, cp *registry.Copier) error {
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(s.o.jobs())
		for _, e := range plan.Entries {
			g.Go(func() error {
				did, err := s.child(gctx, cp, e)
				if did {
					copied.Add(1)
				} else if err == nil {
					present.Add(1)
				}
				return err
			})
		}
		return g.Wait()
	})
	if err != nil {
		return err
	}
	res.Copied, res.Present = int(copied.Load()), int(present.Load())
	s.log.Debug("pushed index", "tags", len(tags), "digest", plan.Digest.String(),
		"copied", res.Copied, "present", res.Present)
	return nil
}

// child makes one child present in the target repository and reports
// whether it copied it: nothing when it was read from there; otherwise its
// blobs are mounted or streamed and its manifest is PUT with its exact
// bytes (a nested index goes with everything it references). Within one
// registry it does not ask the target first: every blob is one mount
// request whether or not the target holds it, and PUTting a manifest again
// is harmless, so a HEAD per child cost one request per source on every
// merge to save a few when the target already held that child. Across
// registries one HEAD is asked, because a present child saves streaming
// its blobs.
func (s *session) child(ctx context.Context, cp *registry.Copier, e *Entry) (bool, error) {
	if e.inTarget {
		return false, nil
	}
	dst := cp.Repository().Digest(e.Descriptor.Digest.String())
	if e.Source.RegistryStr() != dst.RegistryStr() {
		got, err := s.rc.Head(ctx, dst)
		if err != nil {
			return false, err
		}
		if got != nil {
			s.log.Debug("child present", "digest", dst.DigestStr())
			return false, nil
		}
	}
	switch mt := e.Descriptor.MediaType; {
	case mt.IsIndex():
		desc, err := s.rc.Get(ctx, e.Source)
		if err == nil {
			err = cp.Push(ctx, dst, desc)
		}
		if err != nil {
			return false, fmt.Errorf("copying index %s: %w", e.Source, err)
		}
	case mt.IsImage():
		img, err := e.img()
		if err != nil {
			return false, err
		}
		if err := cp.Image(ctx, img, e.Source.Context(), dst); err != nil {
			return false, fmt.Errorf("copying %s: %w", e.Source, err)
		}
	default:
		return false, fmt.Errorf("%s: %w %q", e.Source, registry.ErrUnsupportedMediaType, mt)
	}
	s.log.Debug("copied child", "from", e.Source.String(), "to", dst.String())
	return true, nil
}
