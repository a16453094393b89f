package index

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/imgctl/imgctl/registry"
	"golang.org/x/sync/errgroup"
)

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
	s := newSession(o, target.Context(), srcs)
	var existing []*v1.Hash
	if !o.TagChecked {
		var err error
		if existing, err = s.readTags(ctx, target); err != nil {
			return nil, err
		}
	} else if err := registry.SameRepository(s.tags(target)); err != nil {
		return nil, err
	}
	plan, err := s.merge(entries, annotations)
	if err != nil {
		return nil, err
	}
	todo, err := s.check(target, plan, existing)
	if err != nil {
		return nil, err
	}
	var copied int
	if !o.DryRun && len(todo) > 0 {
		if copied, err = s.uploadPrepared(ctx, target.Context(), plan.Entries, byDigest); err != nil {
			return nil, err
		}
	}
	res, err := s.write(ctx, target, todo, plan)
	if err != nil {
		return nil, err
	}
	if res.Pushed {
		res.Copied, res.Present = copied, len(plan.Entries)-copied
	}
	return res, nil
}

// uploadPrepared makes every child present in repo and marks the entries
// as in the target, so that finish only PUTs the index. A child that is
// not Present was made by this run (a rebased variant, a provenance
// statement with its own times) and is absent but for a re-run, where
// PUTting the same bytes again is harmless; so the target is asked first
// (one HEAD) only when a blob would be streamed from another registry.
func (s *session) uploadPrepared(ctx context.Context, repo name.Repository, es []*Entry, by map[v1.Hash]*Prepared) (int, error) {
	cp := s.rc.Copier(repo)
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
			if crossesRegistries(p.Blobs, repo) {
				got, err := s.rc.Head(gctx, dst)
				if err != nil || got != nil {
					return err
				}
			}
			bg, bctx := errgroup.WithContext(gctx)
			for _, b := range p.Blobs {
				bg.Go(func() error { return preparedBlob(bctx, cp, b) })
			}
			if err := bg.Wait(); err != nil {
				return err
			}
			if err := cp.Put(gctx, dst, registry.RawManifest{Raw: p.Manifest, Type: e.Descriptor.MediaType}); err != nil {
				return err
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

// crossesRegistries reports whether any of blobs would be streamed into
// repo from another registry.
func crossesRegistries(blobs []Blob, repo name.Repository) bool {
	for _, b := range blobs {
		if b.Data == nil && b.From.RegistryStr() != repo.RegistryStr() {
			return true
		}
	}
	return false
}

// preparedBlob uploads an in-memory blob, or mounts or streams a blob from
// its repository.
func preparedBlob(ctx context.Context, cp *registry.Copier, b Blob) error {
	if b.Data != nil {
		return cp.UploadBytes(ctx, b.Descriptor.Digest, b.Data)
	}
	return cp.RemoteBlob(ctx, b.Descriptor.Digest, b.Descriptor.MediaType, b.From)
}
