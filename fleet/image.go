package fleet

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/findings"
	"github.com/imgctl/imgctl/patchlevel"
	"github.com/imgctl/imgctl/policy"
	"github.com/imgctl/imgctl/promote"
	"github.com/imgctl/imgctl/rebase"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/sign"
)

// ErrNotATag is an image's failure when its reference names no tag: the
// new release tag is derived from the source's.
var ErrNotATag = errors.New("a release reference must name a tag")

// maxChain bounds how many earlier promotions are followed from one
// reference (a list not updated for that many months).
const maxChain = 24

// runner is one Run: what every image shares.
type runner struct {
	o      Options
	rc     *registry.Client
	tags   *TagRule
	gate   *policy.Gate
	shared *rebase.Shared
	// levels is the run's patch-level cache: each base repository's tags
	// and each revision read once per run.
	levels *patchlevel.Cache
	log    *slog.Logger
}

// StageTag is the staging tag of the index rebased from the source digest
// src for the release tag next: a function of both, so that a rerun after
// a crash writes the same digest to the same tag.
func StageTag(src v1.Hash, next string) string {
	h := sha256.Sum256([]byte(src.String() + "\n" + next))
	return StagePrefix + hex.EncodeToString(h[:])[:24]
}

// image works on one release reference and reports it.
func (r *runner) image(ctx context.Context, ref name.Reference) Image {
	im := Image{Ref: ref.String(), Variants: []Variant{}}
	err := r.work(ctx, ref, &im)
	var refused *refusal
	switch {
	case errors.As(err, &refused):
		im.Outcome, im.Failure, im.Reason, im.Findings = Failed, FailureCheck, refused.Error(), refused.findings
	case err != nil:
		im.Outcome, im.Failure, im.Reason = Failed, FailureError, err.Error()
	}
	r.log.Debug("image done", "ref", im.Ref, "outcome", string(im.Outcome), "tag", im.Tag)
	return im
}

// refusal is a gate's refusal of a rebased index, with its findings.
type refusal struct {
	err      error
	findings []findings.Finding
}

func (e *refusal) Error() string { return e.err.Error() }
func (e *refusal) Unwrap() error { return e.err }

// work follows the reference's earlier promotions to the newest, then
// leaves it alone when current, or rebases, verifies, signs and promotes
// it.
func (r *runner) work(ctx context.Context, ref name.Reference, im *Image) error {
	tag, ok := ref.(name.Tag)
	if !ok {
		return fmt.Errorf("%w: %s", ErrNotATag, ref)
	}
	repo := tag.Context()
	r.rc.Scope([]name.Repository{repo}, r.push(repo))
	d, err := r.rc.Head(ctx, tag)
	if err != nil {
		return err
	}
	if d == nil {
		return fmt.Errorf("%s: %w", tag, registry.ErrUnexpectedNotFound)
	}
	im.Digest = d.String()
	taken, err := r.taken(ctx, repo)
	if err != nil {
		return err
	}
	src, digest := tag, *d
	for range maxChain {
		earlier, next, err := r.tags.Next(src.TagStr(), taken)
		if err != nil {
			return err
		}
		found, fd, err := r.promotionOf(ctx, repo, digest, earlier)
		if err != nil {
			return err
		}
		if found == "" {
			return r.patch(ctx, src, digest, repo.Tag(next), im)
		}
		im.Via = append(im.Via, repo.Tag(found).String())
		src, digest = repo.Tag(found), fd
	}
	return fmt.Errorf("%s: more than %d promotions to follow", tag, maxChain)
}

// push is the scope a run writes to: repo, unless it is a dry run.
func (r *runner) push(repo name.Repository) []name.Repository {
	if r.o.DryRun {
		return nil
	}
	return []name.Repository{repo}
}

// taken reads the repository's tags once per image.
func (r *runner) taken(ctx context.Context, repo name.Repository) (map[string]bool, error) {
	list, err := r.rc.ListTags(ctx, repo)
	if err != nil {
		return nil, err
	}
	m := make(map[string]bool, len(list))
	for _, t := range list {
		m[t] = true
	}
	return m, nil
}

// promotionOf returns the first of the candidate tags whose index names
// src as its source (AnnotationSource), with its digest; "" when none
// does.
func (r *runner) promotionOf(ctx context.Context, repo name.Repository, src v1.Hash, candidates []string) (string, v1.Hash, error) {
	for _, c := range candidates {
		rd, err := r.rc.Get(ctx, repo.Tag(c))
		if err != nil {
			return "", v1.Hash{}, err
		}
		if rd == nil || !rd.MediaType.IsIndex() {
			continue
		}
		im, err := v1.ParseIndexManifest(bytes.NewReader(rd.Manifest))
		if err != nil {
			continue // not ours: imgctl writes valid indexes
		}
		if im.Annotations[AnnotationSource] == src.String() {
			return c, rd.Digest, nil
		}
	}
	return "", v1.Hash{}, nil
}

// patch rebases src (at digest) for the release tag next: it stages the
// rebased index, verifies it, signs it and promotes it. A current source
// is left alone; one reached through earlier promotions is reported as
// promoted by them.
func (r *runner) patch(ctx context.Context, src name.Tag, digest v1.Hash, next name.Tag, im *Image) error {
	stage := src.Context().Tag(StageTag(digest, next.TagStr()))
	ro := r.o.Rebase
	ro.Registry, ro.Shared, ro.Stage, ro.DryRun = r.rc, r.shared, &stage, r.o.DryRun
	// The staging tag is imgctl's own: after a crash and a move of the
	// bases, the same source and release tag stage another index there,
	// and nothing was promoted from the old one (it would have been found).
	ro.Force = true
	ro.Annotations = map[string]string{AnnotationSource: digest.String()}
	res, err := rebase.Rebase(ctx, src.Context().Digest(digest.String()), next, ro)
	if err != nil {
		return err
	}
	im.Variants = variants(res.Status)
	if err := r.patchLevel(ctx, res.Status, im); err != nil {
		return err
	}
	if !res.Stale {
		im.Outcome = Current
		if len(im.Via) > 0 {
			im.Outcome, im.Earlier = Promoted, true
			im.Tag, im.NewDigest = src.String(), digest.String()
			im.Reason = "promoted by an earlier run"
		}
		return nil
	}
	im.Tag, im.NewDigest, im.Stage = next.String(), res.Index.Digest.String(), stage.String()
	if r.o.DryRun {
		im.Outcome, im.Reason = Skipped, "dry run: would promote "+res.Index.Digest.String()+" to "+next.String()
		return nil
	}
	staged := src.Context().Digest(res.Index.Digest.String())
	g := r.imageGate(res)
	if err := r.precheck(ctx, g, staged, res); err != nil {
		return err
	}
	if r.o.Signer != nil {
		if _, err := sign.Sign(ctx, staged, r.o.Signer, sign.Options{Registry: r.rc, Format: r.o.Format,
			Recursive: g.Signed == sign.ScopeAll, Logger: r.o.Logger}); err != nil {
			return fmt.Errorf("signing %s: %w", staged, err)
		}
	}
	pr, err := promote.Run(ctx, g, staged, next, promote.Options{Registry: r.rc, Logger: r.o.Logger})
	if errors.Is(err, promote.ErrRefused) && pr != nil && pr.Report != nil {
		return &refusal{err: err, findings: pr.Report.Errors()}
	}
	if err != nil {
		return err
	}
	im.Outcome = Promoted
	return nil
}

// imageGate is the run's gate for one image: a copy (the gate caches
// what it reads), with the rebased index's Windows builds as targets when
// neither the policy nor the flags name any.
func (r *runner) imageGate(res *rebase.Result) *policy.Gate {
	g := *r.gate
	if len(g.Verify.Targets) == 0 {
		g.Verify.Targets = res.Targets()
	}
	return &g
}

// precheck runs the gate without its signature requirements on the staged
// index, before it is signed: a refused index is never signed.
func (r *runner) precheck(ctx context.Context, g *policy.Gate, staged name.Digest, res *rebase.Result) error {
	pre := *g
	pre.Keys, pre.Signed = nil, sign.ScopeReference
	pre.SupplyChain = slices.Clone(g.SupplyChain)
	for i := range pre.SupplyChain {
		pre.SupplyChain[i].Keys = nil // provenance and SBOM are checked now, signatures at promote
	}
	rep, err := pre.Check(ctx, staged.String(), staged.Context(), res.Snapshot())
	if err != nil {
		return err
	}
	if !rep.Passed {
		return &refusal{err: fmt.Errorf("%w %s: %d error(s)", promote.ErrRefused, staged, len(rep.Errors())), findings: rep.Errors()}
	}
	return nil
}

// patchLevel reports how far behind the source's Windows variants were
// (see patchlevel.Check) on the run's date, through the run's cache: each
// base repository's tags and each revision are read once per run. What
// cannot be told is the variant's own status and reason; only a cancelled
// run is an error.
func (r *runner) patchLevel(ctx context.Context, st rebase.Status, im *Image) error {
	refs := make([]patchlevel.Ref, len(st.Variants))
	for i, v := range st.Variants {
		refs[i] = patchlevel.Ref{Platform: v.Platform, Digest: v.Digest, Base: v.BaseName}
	}
	levels, err := patchlevel.CheckRefs(ctx, refs, patchlevel.Options{Registry: r.rc, At: r.o.At, Cache: r.levels}, r.rc.NameOptions()...)
	if err != nil {
		return err
	}
	for i, v := range levels {
		im.Variants[i].PatchLevel = v
		if v == nil {
			continue
		}
		if n := v.PatchTuesdaysBehind; n != nil && (im.PatchTuesdaysBehind == nil || *n > *im.PatchTuesdaysBehind) {
			im.PatchTuesdaysBehind = n
		}
	}
	return nil
}
