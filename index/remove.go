package index

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/registry"
)

// Remove publishes src, an index, without the entries that match any of
// drop, and without their attestations, as target. An entry matches a
// platform with the same os, architecture and variant and, when the platform
// has an os.version, for Windows the same build (platform.SameBuild). The
// source index's annotations are kept, o.Annotations override them, and the
// entries are ordered as Create orders them. It returns ErrNoMatch when a
// platform matches nothing.
func Remove(ctx context.Context, target name.Tag, src name.Reference, drop []platform.Platform, o Options) (*Result, error) {
	if len(drop) == 0 {
		return nil, fmt.Errorf("%w: no platform to remove", ErrNoMatch)
	}
	s := newSession(o, target.Context(), []name.Reference{src})
	existing, err := s.readTags(ctx, target)
	if err != nil {
		return nil, err
	}
	srcs, err := s.load(ctx, []name.Reference{src}, target.Context())
	if err != nil {
		return nil, err
	}
	if !srcs[0].isIndex {
		return nil, fmt.Errorf("%s: %w", src, registry.ErrNotAnIndex)
	}
	kept, err := s.without(srcs[0].entries, drop)
	if err != nil {
		return nil, err
	}
	plan, err := s.merge(kept, mergeAnnotations(srcs[0].annotations, o.Annotations))
	if err != nil {
		return nil, err
	}
	return s.finish(ctx, target, plan, existing)
}

// without drops the image entries that match a platform; attestations of
// dropped entries go in merge, which drops attestations of absent subjects.
func (s *session) without(entries []*Entry, drop []platform.Platform) ([]*Entry, error) {
	matched := make([]bool, len(drop))
	var kept []*Entry
	for _, e := range entries {
		hit := false
		for i, p := range drop {
			if d := e.Descriptor.Platform; !e.IsAttestation() && d != nil && platform.SameBuild(p, *d) {
				matched[i], hit = true, true
			}
		}
		if hit {
			s.note("removed %s", e)
			continue
		}
		kept = append(kept, e)
	}
	for i, ok := range matched {
		if !ok {
			return nil, fmt.Errorf("%w %s", ErrNoMatch, platform.Format(drop[i]))
		}
	}
	return kept, nil
}
