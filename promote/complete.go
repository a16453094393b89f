package promote

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/policy"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/sign"
	"github.com/imgctl/imgctl/snapshot"
)

// complete makes the Copier's repository hold everything of the source
// digest by digest (the manifest and its children, the cosign tags,
// the referrers) and checks the signatures there; the tag is written after
// it, by registry.Publish, or not at all when it already pointed at the
// digest. Within the source's own repository there is nothing to copy and
// the gate has just checked the signatures there.
func complete(ctx context.Context, g *policy.Gate, rc *registry.Client, cp *registry.Copier, desc *remote.Descriptor, pr *Promotion, snap *snapshot.Snapshot, log *slog.Logger) error {
	dstRepo := cp.Repository()
	if dstRepo.Name() == pr.Source.Context().Name() {
		return nil
	}
	prev, err := g.Predecessors(ctx, rc, pr.Source.Context(), snap)
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
		d := p.Desc.Digest
		if err := cp.Push(ctx, dstRepo.Digest(d.String()), p.Desc); err != nil {
			return fmt.Errorf("copying the earlier attestation manifest %s to %s: %w", p.Repo.Digest(d.String()), dstRepo, err)
		}
		log.Debug("copied earlier attestation manifest", "digest", d.String(), "from", p.Repo.String(), "to", dstRepo.String())
		if _, ok := from[p.Repo.Name()]; !ok {
			repos = append(repos, p.Repo)
		}
		from[p.Repo.Name()] = append(from[p.Repo.Name()], d)
	}
	for _, r := range repos {
		if err := copyArtifacts(ctx, rc, r, dstRepo, from[r.Name()], pr); err != nil {
			return err
		}
	}
	fs, err := g.CheckChain(ctx, dstRepo, snap)
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
func copyArtifacts(ctx context.Context, rc *registry.Client, src, dstRepo name.Repository, digests []v1.Hash, pr *Promotion) error {
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
