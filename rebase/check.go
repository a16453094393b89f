package rebase

import (
	"context"
	"maps"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sync/errgroup"

	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/snapshot"
)

// Status is the base status of every variant of an index: the JSON shape of
// `imgctl bases -o json`.
type Status struct {
	// Ref is the index as given and Digest the digest it pointed at.
	Ref    string `json:"ref"`
	Digest string `json:"digest"`
	// Stale is set when any variant is stale.
	Stale    bool      `json:"stale"`
	Variants []Variant `json:"variants"`
}

// source is the index being checked or rebased.
type source struct {
	ref      name.Reference
	digest   v1.Hash
	index    *v1.IndexManifest
	variants []*variant      // in index order, attestations and nested indexes left out
	others   []v1.Descriptor // attestations and anything else that is not a variant
}

// Check reports, for each variant of the index src, its base, the base's
// current image for the variant's platform and whether the variant is
// stale. It reads the index, each variant's manifest, each base reference
// once and, for recorded index digests, the old index; configs only where a
// platform is missing. It never reads a layer.
func Check(ctx context.Context, src name.Reference, o Options) (*Status, error) {
	s := newSession(o, src, nil)
	in, err := s.loadSource(ctx, src)
	if err != nil {
		return nil, err
	}
	return in.status(), nil
}

func (in *source) status() *Status {
	st := &Status{Ref: in.ref.String(), Digest: in.digest.String(), Variants: []Variant{}}
	for _, v := range in.variants {
		st.Variants = append(st.Variants, v.Variant)
		st.Stale = st.Stale || v.Stale
	}
	return st
}

// loadSource reads the index and loads every variant, at most Jobs at a
// time.
func (s *session) loadSource(ctx context.Context, ref name.Reference) (*source, error) {
	rd, err := s.get(ctx, ref)
	if err != nil {
		return nil, err
	}
	_, im, err := registry.ReadIndex(ref, rd)
	if err != nil {
		return nil, err
	}
	in := &source{ref: ref, digest: rd.Digest, index: im}
	var descs []v1.Descriptor
	for _, d := range im.Manifests {
		if d.MediaType.IsImage() && !snapshot.IsAttestation(d) {
			descs = append(descs, d)
		} else {
			in.others = append(in.others, d)
		}
	}
	in.variants = make([]*variant, len(descs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.o.jobs())
	for i, d := range descs {
		g.Go(func() error {
			v, err := s.load(gctx, ref.Context(), d)
			in.variants[i] = v
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return in, nil
}

// annotations returns a copy of the source index's annotations.
func (in *source) annotations() map[string]string { return maps.Clone(in.index.Annotations) }
