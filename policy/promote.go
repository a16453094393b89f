package policy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/imgctl/imgctl/sign"
	"github.com/imgctl/imgctl/snapshot"
	"github.com/imgctl/imgctl/verify"
)

// Sentinel errors of Promote, checked with errors.Is.
var (
	// ErrRefused is returned when the source fails the gate; nothing is
	// written.
	ErrRefused = errors.New("refusing to promote")
	// ErrTagExists is returned when the target tag points at another
	// manifest (like index.ErrTagExists); nothing is written.
	ErrTagExists = errors.New("refusing to overwrite existing tag")
	// ErrUnverifiedCopy is returned when the signatures copied to the
	// target repository do not verify there; the tag is not written.
	ErrUnverifiedCopy = errors.New("the copied signatures do not verify at the destination")
	// ErrUnsupportedMediaType is returned for a source that is neither an
	// image nor an index.
	ErrUnsupportedMediaType = errors.New("unsupported media type")
)

// PromoteOptions control Promote.
type PromoteOptions struct {
	// Remote are the go-containerregistry options for every request.
	Remote []remote.Option
	// Logger receives progress at debug level; nil discards.
	Logger *slog.Logger
	// Jobs bounds concurrent blob uploads; 0 means DefaultJobs.
	Jobs int
}

// DefaultJobs bounds concurrent blob uploads when PromoteOptions.Jobs is 0.
const DefaultJobs = 4

// pullerOptions and pusherOptions size the source reads at twice the
// uploads: a transport that re-opens a request body for each attempt (as
// imgctl's retrying one may) holds two reads of a source blob per streamed
// upload, and with go-containerregistry's pull limiter no larger than the
// uploads, a cross-registry copy would wait forever.
func (o PromoteOptions) pullerOptions() []remote.Option {
	return append(o.Remote[:len(o.Remote):len(o.Remote)], remote.WithJobs(2*o.jobs()))
}

func (o PromoteOptions) pusherOptions() []remote.Option {
	return append(o.Remote[:len(o.Remote):len(o.Remote)], remote.WithJobs(o.jobs()))
}

func (o PromoteOptions) jobs() int {
	if o.Jobs <= 0 {
		return DefaultJobs
	}
	return o.Jobs
}

// Promotion is what Promote did.
type Promotion struct {
	// Source is the verified (and copied) manifest, by digest.
	Source name.Digest
	Target name.Tag
	Report *verify.Report
	// Pushed is false when refused and when Target already pointed at
	// Source.
	Pushed     bool
	Signatures sign.CopyResult
}

// Promote resolves src to a digest once, checks that digest with the gate,
// and copies exactly it to dst: the manifest and every child by their exact
// bytes (blobs mounted within a registry, streamed across registries), then
// the cosign signature, attestation and SBOM tags and the referrers of the
// manifest and of each child, then, once the signatures verify at dst, the
// tag. An existing dst tag is never overwritten (ErrTagExists) unless it
// already points at the digest, which is then a verified no-op. A source
// that fails the gate returns its report and ErrRefused, and nothing is
// written.
func (g *Gate) Promote(ctx context.Context, src name.Reference, dst name.Tag, o PromoteOptions) (*Promotion, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	puller, err := remote.NewPuller(o.pullerOptions()...)
	if err != nil {
		return nil, fmt.Errorf("setting up registry client: %w", err)
	}
	desc, err := puller.Get(ctx, src)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", src, err)
	}
	pr := &Promotion{Source: src.Context().Digest(desc.Digest.String()), Target: dst}
	existing, err := head(ctx, puller, dst)
	if err != nil {
		return pr, err
	}
	if existing != nil && *existing != desc.Digest {
		return pr, fmt.Errorf("%w %s: it points at %s, not %s", ErrTagExists, dst, existing, desc.Digest)
	}
	snap, err := load(ctx, desc)
	if err != nil {
		return pr, fmt.Errorf("%s: %w", pr.Source, err)
	}
	pr.Report = g.Check(ctx, src.String(), src.Context(), snap)
	if !pr.Report.Passed {
		return pr, fmt.Errorf("%w %s: %d error(s)", ErrRefused, pr.Source, len(pr.Report.Errors()))
	}
	if existing != nil {
		log.Debug("target already points at the source", "target", dst.String(), "digest", desc.Digest.String())
		return pr, nil
	}
	if err := g.copy(ctx, puller, desc, pr, snap, o, log); err != nil {
		return pr, err
	}
	pr.Pushed = true
	return pr, nil
}

// copy writes everything by digest, checks the signatures at dst, then
// tags.
func (g *Gate) copy(ctx context.Context, puller *remote.Puller, desc *remote.Descriptor, pr *Promotion, snap *snapshot.Snapshot, o PromoteOptions, log *slog.Logger) error {
	dstRepo := pr.Target.Context()
	pusher, err := remote.NewPusher(o.pusherOptions()...)
	if err != nil {
		return fmt.Errorf("setting up registry client: %w", err)
	}
	if err := pusher.Push(ctx, dstRepo.Digest(desc.Digest.String()), desc); err != nil {
		return fmt.Errorf("copying %s to %s: %w", pr.Source, dstRepo, err)
	}
	log.Debug("copied manifest", "digest", desc.Digest.String(), "to", dstRepo.String())
	digests := []v1.Hash{desc.Digest}
	for _, e := range snap.Entries {
		if snap.Index != nil {
			digests = append(digests, e.Descriptor.Digest)
		}
	}
	cr, err := sign.CopySignatures(ctx, pr.Source.Context(), dstRepo, digests, sign.CopyOptions{Remote: o.Remote, Logger: log})
	if err != nil {
		return err
	}
	pr.Signatures = *cr
	if len(g.Keys) > 0 {
		fs := sign.Verify(ctx, dstRepo, sign.Subjects(snap), g.Keys, sign.VerifyOptions{Remote: g.Remote, Concurrency: g.Concurrency})
		if len(fs) > 0 {
			return fmt.Errorf("%w: %s: %s", ErrUnverifiedCopy, fs[0].Digest, fs[0].Message)
		}
	}
	if h, err := head(ctx, puller, pr.Target); err != nil || (h != nil && *h != desc.Digest) {
		return errors.Join(err, fmt.Errorf("%w %s: it appeared while copying and points at %s", ErrTagExists, pr.Target, h))
	}
	if err := remote.Put(pr.Target, desc, append(o.Remote[:len(o.Remote):len(o.Remote)], remote.WithContext(ctx))...); err != nil {
		return fmt.Errorf("tagging %s: %w", pr.Target, err)
	}
	return nil
}

// load reads what verify checks of a fetched manifest.
func load(ctx context.Context, desc *remote.Descriptor) (*snapshot.Snapshot, error) {
	switch {
	case desc.MediaType.IsIndex():
		idx, err := desc.ImageIndex()
		if err != nil {
			return nil, fmt.Errorf("reading index: %w", err)
		}
		return snapshot.LoadIndex(ctx, idx, snapshot.DefaultConcurrency)
	case desc.MediaType.IsImage():
		img, err := desc.Image()
		if err != nil {
			return nil, fmt.Errorf("reading image: %w", err)
		}
		return snapshot.LoadImage(img)
	}
	return nil, fmt.Errorf("%w %q", ErrUnsupportedMediaType, desc.MediaType)
}

// head returns the digest ref points at, or nil when it does not exist.
func head(ctx context.Context, p *remote.Puller, ref name.Reference) (*v1.Hash, error) {
	d, err := p.Head(ctx, ref)
	var terr *transport.Error
	if errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("checking %s: %w", ref, err)
	}
	return &d.Digest, nil
}
