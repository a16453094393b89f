package index

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sync/errgroup"

	"github.com/imgctl/imgctl/registry"
)

// source is one loaded source.
type source struct {
	entries     []*Entry
	isIndex     bool
	annotations map[string]string
}

// load reads every source with one GET each (at most Jobs at a time), then
// reads the configs of the entries that need them.
func (s *session) load(ctx context.Context, refs []name.Reference, target name.Repository) ([]*source, error) {
	out := make([]*source, len(refs))
	var g errgroup.Group
	g.SetLimit(s.o.jobs())
	for i, ref := range refs {
		g.Go(func() error {
			src, err := s.loadOne(ctx, i, ref, target)
			out[i] = src
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var all []*Entry
	for _, src := range out {
		all = append(all, src.entries...)
	}
	return out, s.fillPlatforms(ctx, all)
}

// loadOne fetches one source. The context is kept by the lazily read
// children, so it must outlive the load.
func (s *session) loadOne(ctx context.Context, i int, ref name.Reference, target name.Repository) (*source, error) {
	desc, err := s.rc.Get(ctx, ref)
	if err != nil {
		return nil, err
	}
	repo := ref.Context()
	inTarget := repo.Name() == target.Name()
	s.log.Debug("source", "ref", ref.String(), "digest", desc.Digest.String(), "mediaType", string(desc.MediaType))
	switch {
	case desc.MediaType.IsIndex():
		idx, im, err := registry.ReadIndex(ref, desc)
		if err != nil {
			return nil, err
		}
		src := &source{isIndex: true, annotations: maps.Clone(im.Annotations)}
		for j, d := range im.Manifests {
			src.entries = append(src.entries, &Entry{
				Descriptor: cloneDescriptor(d), Source: repo.Digest(d.Digest.String()), From: ref,
				SourceIndex: i, Child: j, parent: idx, inTarget: inTarget,
			})
		}
		return src, nil
	case desc.MediaType.IsImage():
		img, err := desc.Image()
		if err != nil {
			return nil, fmt.Errorf("reading image %s: %w", ref, err)
		}
		e := &Entry{
			Descriptor: v1.Descriptor{MediaType: desc.MediaType, Digest: desc.Digest, Size: desc.Size},
			Source:     repo.Digest(desc.Digest.String()), From: ref, SourceIndex: i, image: img, inTarget: inTarget,
		}
		return &source{entries: []*Entry{e}}, nil
	}
	return nil, fmt.Errorf("%s: %w %q", ref, registry.ErrUnsupportedMediaType, desc.MediaType)
}

// needsConfig reports whether an entry's platform must be read from its
// config: every single-image source, every image without a descriptor
// platform, and Windows descriptors without os.version.
func needsConfig(e *Entry) bool {
	if !e.Descriptor.MediaType.IsImage() || e.IsAttestation() {
		return false
	}
	p := e.Descriptor.Platform
	return e.parent == nil || p == nil || (p.OS == "windows" && p.OSVersion == "")
}

// fillPlatforms reads configs where needed, at most Jobs at a time.
func (s *session) fillPlatforms(ctx context.Context, entries []*Entry) error {
	var g errgroup.Group
	g.SetLimit(s.o.jobs())
	for _, e := range entries {
		if !needsConfig(e) {
			continue
		}
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			cf, err := e.config()
			if err != nil {
				return err
			}
			s.applyConfig(e, cf.Platform())
			return nil
		})
	}
	return g.Wait()
}

// applyConfig sets the platform of an image source, fills a missing
// descriptor platform, or fills os.version (and os.features) into a Windows
// descriptor that lacks it.
func (s *session) applyConfig(e *Entry, cp *v1.Platform) {
	if cp == nil {
		return
	}
	p := e.Descriptor.Platform
	switch {
	case e.parent == nil || p == nil:
		e.Descriptor.Platform = clonePlatform(cp)
		s.log.Debug("platform from config", "digest", e.Descriptor.Digest.String(), "platform", cp.String())
	case cp.OSVersion != "":
		np := clonePlatform(p)
		np.OSVersion = cp.OSVersion
		if len(np.OSFeatures) == 0 {
			np.OSFeatures = slices.Clone(cp.OSFeatures)
		}
		e.Descriptor.Platform = np
		s.note("filled os.version %s from the config of %s", cp.OSVersion, e)
	}
}

func clonePlatform(p *v1.Platform) *v1.Platform {
	if p == nil {
		return nil
	}
	c := *p
	c.OSFeatures = slices.Clone(p.OSFeatures)
	c.Features = slices.Clone(p.Features)
	return &c
}

func cloneDescriptor(d v1.Descriptor) v1.Descriptor {
	d.Platform = clonePlatform(d.Platform)
	d.Annotations = maps.Clone(d.Annotations)
	d.URLs = slices.Clone(d.URLs)
	return d
}
