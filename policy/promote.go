package policy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/sign"
	"github.com/imgctl/imgctl/snapshot"
	"github.com/imgctl/imgctl/verify"
)

// Sentinel errors of Promote, checked with errors.Is. A target tag that
// points at another manifest is registry.ErrTagExists.
var (
	// ErrRefused is returned when the source fails the gate; nothing is
	// written.
	ErrRefused = errors.New("refusing to promote")
	// ErrUnverifiedCopy is returned when the signatures or attestations
	// copied to the target repository do not pass the gate's requirements
	// there; the tag is not written.
	ErrUnverifiedCopy = errors.New("the copied supply chain does not verify at the destination")
	// ErrImmutableArtifactTag is returned when the destination refuses to
	// update a cosign tag or a referrers fallback tag because it holds
	// tags immutable (registry.ImmutableTagError); the tag is not written.
	// It is not a missing signature: the registry's rule must exempt
	// those tags.
	ErrImmutableArtifactTag = errors.New("the destination holds signature and referrer tags immutable")
)

// PromoteOptions control Promote.
type PromoteOptions struct {
	// Registry is the run's registry client; nil means registry.New().
	Registry *registry.Client
	// Logger receives progress at debug level; nil discards.
	Logger *slog.Logger
}

// Promotion is what Promote did.
type Promotion struct {
	// Source is the verified (and copied) manifest, by digest.
	Source name.Digest
	Target name.Tag
	Report *verify.Report
	// Snapshot is what the gate read of Source: its children's manifests
	// and configs; nil when promote failed before reading them.
	Snapshot *snapshot.Snapshot
	// Pushed is false when refused and when Target already pointed at
	// Source; the signatures may then still have been copied (Signatures).
	Pushed bool
	// Signatures counts the cosign tags and referrers written at the
	// destination.
	Signatures registry.ArtifactResult
}

// Promote resolves src to a digest once, checks that digest with the gate,
// and copies exactly it to dst: the manifest and every child by their exact
// bytes (blobs mounted within a registry, streamed across registries), then
// the attestation manifests outside the index that its provenance names
// as predecessors (imgctl rebase keeps them by digest), the cosign
// signature, attestation and SBOM tags and the referrers (or their
// fallback tag) of the manifest, of each child (attestation manifests
// included) and of those predecessors, then, once the gate's signature and
// attestation requirements pass at dst, the tag. An existing dst tag is never overwritten (registry.ErrTagExists).
// When it already points at the digest (a re-run, or a plain `crane copy`
// that copied the index but not its signatures), Promote still makes dst
// complete, copying the artifacts it lacks and verifying the signatures
// there, and leaves the tag alone. A source that fails the gate returns
// its report and ErrRefused, and nothing is written. Signatures that cannot
// be read, at the source or at dst, are an error, not a refusal.
func (g *Gate) Promote(ctx context.Context, src name.Reference, dst name.Tag, o PromoteOptions) (*Promotion, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	rc := registry.Or(o.Registry)
	if g.Registry == nil {
		g.Registry = rc
	}
	rc.Scope([]name.Repository{src.Context()}, []name.Repository{dst.Context()})
	f, err := rc.Fetch(ctx, src)
	if err != nil {
		return nil, err
	}
	desc := f.Desc
	pr := &Promotion{Source: src.Context().Digest(desc.Digest.String()), Target: dst}
	st, err := rc.CheckTag(ctx, dst, desc.Digest, false, "")
	if err != nil {
		return pr, err
	}
	snap, err := f.Snapshot(ctx)
	if err != nil {
		return pr, fmt.Errorf("%s: %w", pr.Source, err)
	}
	pr.Snapshot = snap
	rep, err := g.Check(ctx, src.String(), src.Context(), snap)
	if err != nil {
		return pr, err
	}
	pr.Report = rep
	if !rep.Passed {
		return pr, fmt.Errorf("%w %s: %d error(s)", ErrRefused, pr.Source, len(rep.Errors()))
	}
	if st.Same() {
		log.Debug("target already points at the source: completing its artifacts", "target", dst.String(), "digest", desc.Digest.String())
		return pr, g.complete(ctx, rc, rc.Copier(dst.Context()), desc, pr, snap, log)
	}
	idx := registry.RawManifest{Raw: desc.Manifest, Type: desc.MediaType}
	err = rc.Publish(ctx, dst, idx, func(ctx context.Context, cp *registry.Copier) error {
		if err := g.complete(ctx, rc, cp, desc, pr, snap, log); err != nil {
			return err
		}
		if st, err := rc.CheckTag(ctx, pr.Target, desc.Digest, false, ""); err != nil {
			return fmt.Errorf("%w (it appeared while copying)", err)
		} else if st.Same() {
			log.Debug("target appeared at the source's digest while copying", "target", pr.Target.String())
		}
		return nil
	})
	if errors.Is(err, ErrImmutableArtifactTag) {
		return pr, fmt.Errorf("%s was not tagged: %w", dst, err)
	}
	if err != nil {
		return pr, err
	}
	pr.Pushed = true
	return pr, nil
}

// complete makes the Copier's repository hold everything of the source
// digest by digest (the manifest and its children, the cosign tags,
// the referrers) and checks the signatures there; the tag is written after
// it, by registry.Publish, or not at all when it already pointed at the
// digest. Within the source's own repository there is nothing to copy and
// the gate has just checked the signatures there.
func (g *Gate) complete(ctx context.Context, rc *registry.Client, cp *registry.Copier, desc *remote.Descriptor, pr *Promotion, snap *snapshot.Snapshot, log *slog.Logger) error {
	dstRepo := cp.Repository()
	if dstRepo.Name() == pr.Source.Context().Name() {
		return nil
	}
	prev, err := g.previousAttestations(ctx, rc, pr.Source.Context(), snap)
	if err != nil {
		return err
	}
	if err := cp.Push(ctx, dstRepo.Digest(desc.Digest.String()), desc); err != nil {
		return fmt.Errorf("copying %s to %s: %w", pr.Source, dstRepo, err)
	}
	log.Debug("copied manifest", "digest", desc.Digest.String(), "to", dstRepo.String())
	digests := []v1.Hash{desc.Digest}
	for _, e := range snap.Entries {
		if snap.Index != nil {
			digests = append(digests, e.Descriptor.Digest)
		}
	}
	// The artifacts to copy, by the repository that holds them: the
	// source's, and those where rebase names earlier attestations.
	from := map[string][]v1.Hash{pr.Source.Context().Name(): digests}
	repos := []name.Repository{pr.Source.Context()}
	for _, p := range prev {
		d := p.desc.Digest
		if err := cp.Push(ctx, dstRepo.Digest(d.String()), p.desc); err != nil {
			return fmt.Errorf("copying the earlier attestation manifest %s to %s: %w", p.repo.Digest(d.String()), dstRepo, err)
		}
		log.Debug("copied earlier attestation manifest", "digest", d.String(), "from", p.repo.String(), "to", dstRepo.String())
		if _, ok := from[p.repo.Name()]; !ok {
			repos = append(repos, p.repo)
		}
		from[p.repo.Name()] = append(from[p.repo.Name()], d)
	}
	for _, r := range repos {
		if err := g.copyArtifacts(ctx, rc, r, dstRepo, from[r.Name()], pr); err != nil {
			return err
		}
	}
	fs, err := g.chain(ctx, dstRepo, snap)
	if err != nil {
		return err
	}
	if len(fs) > 0 {
		return fmt.Errorf("%w: %s %s: %s", ErrUnverifiedCopy, fs[0].Rule, fs[0].Digest, fs[0].Message)
	}
	return nil
}

// copyArtifacts copies the signatures and referrers of digests from src to
// dst, adds what it wrote to pr, and names a destination's immutability
// refusal for what it is.
func (g *Gate) copyArtifacts(ctx context.Context, rc *registry.Client, src, dstRepo name.Repository, digests []v1.Hash, pr *Promotion) error {
	cr, err := rc.CopyArtifacts(ctx, src, dstRepo, digests, registry.ArtifactOptions{Merge: sign.Merge(rc)})
	if cr != nil {
		pr.Signatures.Tags += cr.Tags
		pr.Signatures.Referrers += cr.Referrers
	}
	var imm *registry.ImmutableTagError
	if errors.As(err, &imm) {
		return fmt.Errorf("%w: %s refused to update %s (cosign's sha256-<digest>.sig, .att and .sbom tags and the referrers fallback tag sha256-<digest> change whenever a signature or referrer is added): exempt them from the registry's tag immutability rule: %w",
			ErrImmutableArtifactTag, dstRepo.RegistryStr(), imm.Tag, err)
	}
	return err
}
