package promote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/imgctl/imgctl/policy"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/snapshot"
	"github.com/imgctl/imgctl/verify"
)

// Sentinel errors of Run, checked with errors.Is. A target tag that
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

// Options control Run.
type Options struct {
	// Registry is the run's registry client; nil means registry.New().
	Registry *registry.Client
	// Logger receives progress at debug level; nil discards.
	Logger *slog.Logger
}

// Promotion is what Run did.
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

// Run resolves src to a digest once, checks that digest with the gate g,
// and copies exactly it to dst: the manifest and every child by their exact
// bytes (blobs mounted within a registry, streamed across registries), then
// the attestation manifests outside the index that its provenance names
// as predecessors (imgctl rebase keeps them by digest), the cosign
// signature, attestation and SBOM tags and the referrers (or their
// fallback tag) of the manifest, of each child (attestation manifests
// included) and of those predecessors, then, once the gate's signature and
// attestation requirements pass at dst, the tag. An existing dst tag is
// never overwritten (registry.ErrTagExists).
// When it already points at the digest (a re-run, or a plain `crane copy`
// that copied the index but not its signatures), Run still makes dst
// complete, copying the artifacts it lacks and verifying the signatures
// there, and leaves the tag alone. A source that fails the gate returns
// its report and ErrRefused, and nothing is written. Signatures that cannot
// be read, at the source or at dst, are an error, not a refusal.
func Run(ctx context.Context, g *policy.Gate, src name.Reference, dst name.Tag, o Options) (*Promotion, error) {
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
		return pr, complete(ctx, g, rc, rc.Copier(dst.Context()), desc, pr, snap, log)
	}
	idx := registry.RawManifest{Raw: desc.Manifest, Type: desc.MediaType}
	err = rc.Publish(ctx, dst, idx, func(ctx context.Context, cp *registry.Copier) error {
		if err := complete(ctx, g, rc, cp, desc, pr, snap, log); err != nil {
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
