package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"
)

// ErrBadPrepared is returned by PublishPrepared for a child whose
// descriptor does not describe its manifest bytes.
var ErrBadPrepared = errors.New("prepared child does not match its descriptor")

// Prepared is a child manifest made outside this package (rebase builds
// them): its exact bytes, its index descriptor, and where each blob it
// references can be found.
type Prepared struct {
	// Descriptor is written into the index as is: Digest and Size must be
	// those of Manifest; Platform and Annotations are kept.
	Descriptor v1.Descriptor
	// Manifest is the exact manifest bytes.
	Manifest []byte
	// Blobs are the config and layers the manifest references.
	Blobs []Blob
	// From names the child in notes (e.g. the source index).
	From name.Reference
	// Present says the child is already stored in the target repository
	// (imgctl build: BuildKit pushed it there by digest), so it is neither
	// checked nor uploaded; Manifest and Blobs may then be empty.
	Present bool
}

// Blob is a blob a Prepared manifest references: either held in memory
// (Data, e.g. a new config), or in a repository (From) from which it is
// mounted within one registry and streamed across registries. Blobs already
// in the target repository and non-distributable layers are not copied.
type Blob struct {
	Descriptor v1.Descriptor
	From       name.Repository
	Data       []byte
}

// PublishPrepared publishes children as one index tagged target, with the
// index rules of Create: entries ordered and attestations of absent
// subjects dropped as Create does, an existing tag refused unless o.Force
// (left alone when it already points at this index), nothing written with
// o.DryRun, and the index PUT only once every child is present. With
// o.TagChecked the tag is not read again (the caller checked it).
func PublishPrepared(ctx context.Context, target name.Tag, children []Prepared, annotations map[string]string, o Options) (*Result, error) {
	if len(children) == 0 {
		return nil, ErrNoSources
	}
	var srcs []name.Reference
	byDigest := map[v1.Hash]*Prepared{}
	entries := make([]*Entry, len(children))
	for i := range children {
		c := &children[i]
		d := c.Descriptor.Digest
		if !c.Present || c.Manifest != nil {
			got, _, err := v1.SHA256(bytes.NewReader(c.Manifest))
			if err != nil || got != d || int64(len(c.Manifest)) != c.Descriptor.Size {
				return nil, fmt.Errorf("%w %s: digest or size differs from its bytes", ErrBadPrepared, d)
			}
		}
		for _, b := range c.Blobs {
			if b.Data == nil {
				srcs = append(srcs, b.From.Digest(b.Descriptor.Digest.String()))
			}
		}
		byDigest[d] = c
		entries[i] = &Entry{Descriptor: cloneDescriptor(c.Descriptor), Source: target.Context().Digest(d.String()), From: c.From, SourceIndex: i}
	}
	s, err := newSession(ctx, o, target.Context(), srcs)
	if err != nil {
		return nil, err
	}
	var existing *v1.Hash
	if !o.TagChecked {
		if existing, err = s.head(ctx, target); err != nil {
			return nil, err
		}
	}
	plan, err := s.merge(entries, annotations)
	if err != nil {
		return nil, err
	}
	var copied int
	if !o.DryRun && (existing == nil || (*existing != plan.Digest && o.Force)) {
		if copied, err = s.uploadPrepared(ctx, target.Context(), plan.Entries, byDigest); err != nil {
			return nil, err
		}
	}
	res, err := s.finish(ctx, target, plan, existing)
	if err != nil {
		return nil, err
	}
	if res.Pushed {
		res.Copied, res.Present = copied, len(plan.Entries)-copied
	}
	return res, nil
}

// uploadPrepared makes every child present in repo and marks the entries
// as in the target, so that finish only PUTs the index.
func (s *session) uploadPrepared(ctx context.Context, repo name.Repository, es []*Entry, by map[v1.Hash]*Prepared) (int, error) {
	c := &copier{s: s, repo: repo, direct: s.direct, blobs: semaphore.NewWeighted(int64(s.o.jobs()))}
	var copied atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.o.jobs())
	for _, e := range es {
		p := by[e.Descriptor.Digest]
		if p.Present {
			continue
		}
		g.Go(func() error {
			dst := repo.Digest(e.Descriptor.Digest.String())
			got, err := s.head(gctx, dst)
			if err != nil || got != nil {
				return err
			}
			bg, bctx := errgroup.WithContext(gctx)
			for _, b := range p.Blobs {
				bg.Go(func() error { return c.preparedBlob(bctx, b) })
			}
			if err := bg.Wait(); err != nil {
				return err
			}
			if err := c.put(gctx, dst, rawManifest{p.Manifest, e.Descriptor.MediaType}); err != nil {
				return fmt.Errorf("pushing manifest %s: %w", dst, err)
			}
			copied.Add(1)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	for _, e := range es {
		e.inTarget = true
	}
	return int(copied.Load()), nil
}

// preparedBlob uploads an in-memory blob, or mounts or streams a blob from
// its repository, at most Jobs at a time.
func (c *copier) preparedBlob(ctx context.Context, b Blob) error {
	d := b.Descriptor.Digest
	if b.Data == nil && (b.From.Name() == c.repo.Name() || !b.Descriptor.MediaType.IsDistributable()) {
		return nil
	}
	if err := c.blobs.Acquire(ctx, 1); err != nil {
		return err
	}
	defer c.blobs.Release(1)
	if b.Data == nil && c.direct != nil && mountable(b.From, c.repo) && c.direct.mount(ctx, d, b.From) {
		return nil
	}
	if b.Data != nil && c.direct != nil {
		if err := c.direct.upload(ctx, d, b.Data); err == nil {
			return nil
		}
	}
	var l v1.Layer
	var err error
	if b.Data != nil {
		l = static.NewLayer(b.Data, b.Descriptor.MediaType)
	} else if l, err = remote.Layer(b.From.Digest(d.String()), append(c.s.o.Remote, remote.WithContext(ctx))...); err != nil {
		return fmt.Errorf("reading blob %s: %w", d, err)
	}
	p, err := c.getPusher()
	if err == nil {
		err = p.Upload(ctx, c.repo, l)
	}
	if err != nil {
		return fmt.Errorf("copying blob %s: %w", d, err)
	}
	return nil
}
