package rebase

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sync/errgroup"

	"github.com/imgctl/imgctl/index"
	"github.com/imgctl/imgctl/snapshot"
)

// Result is what Rebase did.
type Result struct {
	// Status is the source's status before the rebase; each rebased
	// variant has NewDigest set.
	Status
	// Tag is the new tag.
	Tag string `json:"tag"`
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
// configs are uploaded. Current variants and their attestations are kept;
// attestations of rebased variants are dropped with a note, as they
// describe the image before the rebase. When every variant is current it
// pushes nothing. Errors name the variant; a Windows build change needs
// Options.AllowBuildChange.
func Rebase(ctx context.Context, src name.Reference, target name.Tag, o Options) (*Result, error) {
	s := newSession(o, src, &target)
	in, err := s.loadSource(ctx, src)
	if err != nil {
		return nil, err
	}
	res := &Result{Status: *in.status(), Tag: target.String(), Notes: []string{}, entries: map[v1.Hash]snapEntry{}}
	if !res.Stale {
		res.Notes = append(res.Notes, fmt.Sprintf("every variant of %s is on its base's current image: nothing to push", src))
		return res, nil
	}
	children, err := s.children(ctx, in, res)
	if err != nil {
		return nil, err
	}
	for _, v := range in.variants {
		if r := v.current.repo.RegistryStr(); v.NewDigest != "" && r != target.RegistryStr() {
			res.Notes = append(res.Notes, fmt.Sprintf("%s: the base is in %s, not %s: its layers are streamed through "+
				"this client, not mounted (mirror the base into %s to avoid that)", v.Platform, r, target.RegistryStr(), target.RegistryStr()))
		}
	}
	io := index.Options{Registry: s.rc, Logger: o.Logger, Force: o.Force, DryRun: o.DryRun, Jobs: o.Jobs}
	ir, err := index.PublishPrepared(ctx, target, children, in.annotations(), io)
	if err != nil {
		return nil, err
	}
	res.Index, res.Pushed = ir, ir.Pushed
	res.Notes = append(res.Notes, ir.Notes...)
	return res, nil
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
	rebasedFrom := map[string]string{}
	for i, v := range in.variants {
		res.Variants[i].NewDigest = v.NewDigest
		if v.NewDigest != "" {
			rebasedFrom[v.Digest] = v.Platform
		}
		if v.note != "" {
			res.Notes = append(res.Notes, v.note)
		}
		res.entries[out[i].Descriptor.Digest] = v.snap
	}
	for _, d := range in.others {
		if p, ok := rebasedFrom[d.Annotations[snapshot.AnnotationReferenceDigest]]; ok && snapshot.IsAttestation(d) {
			res.Notes = append(res.Notes, fmt.Sprintf("dropped attestation %s of %s: it describes the image before the rebase", d.Digest, p))
			continue
		}
		c, err := s.kept(ctx, in, d)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}
