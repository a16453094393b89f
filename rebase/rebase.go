package rebase

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sync/errgroup"

	"github.com/imgctl/imgctl/index"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/snapshot"
)

// Result is what Rebase did.
type Result struct {
	// Status is the source's status before the rebase; each rebased
	// variant has NewDigest set.
	Status
	// Tag is the new tag.
	Tag string `json:"tag"`
	// Tags are every tag of the rebased index, Tag first.
	Tags []string `json:"tags"`
	// Index is the published (or, with DryRun, planned) index; nil when
	// every variant was current.
	Index *index.Result `json:"-"`
	// Pushed is set when the index was pushed.
	Pushed bool `json:"pushed"`
	// Notes say what the rebase dropped or changed on the way.
	Notes []string `json:"notes"`

	entries map[v1.Hash]snapEntry
}

// Rebase moves every stale variant of the index src onto its base's
// current image for the variant's platform and publishes the result as
// target, through index.PublishPrepared: base layers are mounted from the
// base's repository and app layers from src's, never read; only the new
// configs are uploaded. Current variants and their attestations are kept.
// Each rebased variant gets a new attestation manifest holding imgctl's
// SLSA provenance (BuildType), which lists the variant's old attestation
// manifests as resolved dependencies; those leave the index (their subject
// does) and stay in the source repository, kept by the source's tag. When
// every variant is current it pushes nothing. Errors name the variant; a
// Windows build change needs Options.AllowBuildChange.
func Rebase(ctx context.Context, src name.Reference, target name.Tag, o Options) (*Result, error) {
	if err := o.check(target); err != nil {
		return nil, err
	}
	r := &run{target: target}
	s := newSession(o, src, &target)
	in, err := s.loadSource(ctx, src)
	if err != nil {
		return nil, err
	}
	r.src = in
	res := &Result{Status: *in.status(), Tag: target.String(), Tags: []string{target.String()}, Notes: []string{}, entries: map[v1.Hash]snapEntry{}}
	for _, t := range o.AlsoTags {
		res.Tags = append(res.Tags, t.String())
	}
	if !res.Stale {
		res.Notes = append(res.Notes, fmt.Sprintf("every variant of %s is on its base's current image: nothing to push", src))
		return res, nil
	}
	children, err := s.children(ctx, in, res)
	if err != nil {
		return nil, err
	}
	atts, err := s.provenance(ctx, r, res)
	if err != nil {
		return nil, err
	}
	for _, v := range in.variants {
		if r := v.current.repo.RegistryStr(); v.NewDigest != "" && r != target.RegistryStr() {
			res.Notes = append(res.Notes, fmt.Sprintf("%s: the base is in %s, not %s: its layers are streamed through "+
				"this client, not mounted (mirror the base into %s to avoid that)", v.Platform, r, target.RegistryStr(), target.RegistryStr()))
		}
	}
	io := index.Options{Registry: s.rc, Logger: o.Logger, Force: o.Force, DryRun: o.DryRun, Jobs: o.Jobs, AlsoTags: o.AlsoTags}
	ir, err := s.publish(ctx, r, children, atts, io)
	if err != nil {
		return nil, err
	}
	res.Index, res.Pushed = ir, ir.Pushed
	res.Notes = append(res.Notes, ir.Notes...)
	for i, v := range res.Variants {
		for _, d := range ir.Manifest.Manifests {
			if v.NewDigest != "" && snapshot.IsAttestation(d) && d.Annotations[snapshot.AnnotationReferenceDigest] == v.NewDigest {
				res.Variants[i].Provenance = d.Digest.String()
			}
		}
	}
	return res, nil
}

// publish publishes the children and the new attestations as one index.
// When the tag exists, it is an earlier run of this rebase if it holds the
// same images: its attestations are taken in place of the new ones (whose
// times differ, when that run predates SOURCE_DATE_EPOCH-fixed times), so
// that the run is a no-op as before. A refusal at a later tag
// (registry.TagsError) is reported as is.
func (s *session) publish(ctx context.Context, r *run, children, atts []index.Prepared, io index.Options) (*index.Result, error) {
	annotations := r.src.annotations()
	if len(s.o.Annotations) > 0 {
		if annotations == nil {
			annotations = map[string]string{}
		}
		maps.Copy(annotations, s.o.Annotations)
	}
	at := r.target
	if s.o.Stage != nil {
		at = *s.o.Stage
	}
	ir, err := index.PublishPrepared(ctx, at, slices.Concat(children, atts), annotations, io)
	var partial *registry.TagsError
	if !errors.Is(err, registry.ErrTagExists) || errors.As(err, &partial) || len(atts) == 0 {
		return ir, err
	}
	// The earlier run's index is at whichever of the tags exists (the
	// refusal may be for any of them).
	var prev *v1.IndexManifest
	for _, t := range append([]name.Tag{at}, io.AlsoTags...) {
		rd, gerr := s.rc.Get(ctx, t)
		if gerr != nil || rd == nil || !rd.MediaType.IsIndex() {
			continue
		}
		if prev, gerr = v1.ParseIndexManifest(bytes.NewReader(rd.Manifest)); gerr == nil {
			break
		}
	}
	if prev == nil {
		return nil, err
	}
	bySubject := map[string]v1.Descriptor{}
	for _, d := range prev.Manifests {
		if snapshot.IsAttestation(d) {
			bySubject[d.Annotations[snapshot.AnnotationReferenceDigest]] = d
		}
	}
	reused := slices.Clone(atts)
	for i, a := range reused {
		d, ok := bySubject[a.Descriptor.Annotations[snapshot.AnnotationReferenceDigest]]
		if !ok {
			return nil, err
		}
		reused[i] = index.Prepared{Descriptor: d, Present: true, From: at}
	}
	return index.PublishPrepared(ctx, at, slices.Concat(children, reused), annotations, io)
}

// children rebases the stale variants (at most Jobs at a time; every
// failure is reported) and prepares every child of the new index.
func (s *session) children(ctx context.Context, in *source, res *Result) ([]index.Prepared, error) {
	out := make([]index.Prepared, len(in.variants))
	errs := make([]error, len(in.variants))
	var g errgroup.Group
	g.SetLimit(s.o.jobs())
	for i, v := range in.variants {
		g.Go(func() error {
			out[i], errs[i] = s.child(ctx, in, v)
			return nil
		})
	}
	_ = g.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	rebased := map[string]bool{}
	for i, v := range in.variants {
		res.Variants[i].NewDigest = v.NewDigest
		rebased[v.Digest] = v.NewDigest != ""
		if v.note != "" {
			res.Notes = append(res.Notes, v.note)
		}
		res.entries[out[i].Descriptor.Digest] = v.snap
		v.newDesc = out[i].Descriptor
	}
	for _, d := range in.others {
		if snapshot.IsAttestation(d) && rebased[d.Annotations[snapshot.AnnotationReferenceDigest]] {
			continue // replaced by the rebase's provenance: see provenance
		}
		c, err := s.kept(ctx, in, d)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}
