package index

import (
	"context"
	"maps"

	"github.com/google/go-containerregistry/pkg/name"
)

// Create merges sources (tags or digests of images or indexes, in any
// repository or registry) into one index tagged target. With o.DryRun it
// returns the plan and pushes nothing. Requests: one GET per source, one GET
// per config it must read, a HEAD for the tag and per child not read from
// the target repository, for each missing child one POST per blob mounted
// or the upload of each blob from another registry, and one PUT, then one
// PUT for the index; plus one authentication round (GET /v2/, and a token
// where the registry asks for one) per registry, shared with every other
// request of the Options.Registry client.
func Create(ctx context.Context, target name.Tag, sources []name.Reference, o Options) (*Result, error) {
	if len(sources) == 0 {
		return nil, ErrNoSources
	}
	s := newSession(o, target.Context(), sources)
	existing, err := s.readTags(ctx, target)
	if err != nil {
		return nil, err
	}
	srcs, err := s.load(ctx, sources, target.Context())
	if err != nil {
		return nil, err
	}
	var entries []*Entry
	for _, src := range srcs {
		entries = append(entries, src.entries...)
	}
	plan, err := s.merge(entries, o.Annotations)
	if err != nil {
		return nil, err
	}
	return s.finish(ctx, target, plan, existing)
}

// mergeAnnotations returns base overridden by over.
func mergeAnnotations(base, over map[string]string) map[string]string {
	if len(base) == 0 && len(over) == 0 {
		return nil
	}
	out := maps.Clone(base)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, over)
	return out
}
