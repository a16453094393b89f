package registry

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"golang.org/x/sync/errgroup"
)

// TagSuffixes are the cosign tag suffixes CopyArtifacts copies:
// signatures, attestations and SBOMs.
var TagSuffixes = []string{"sig", "att", "sbom"}

// MergeFunc appends to the artifact tag to the entries of the tag from that
// it lacks, and reports whether it wrote. The format is the signer's (sign
// merges cosign signatures), so CopyArtifacts takes it as a function.
type MergeFunc func(ctx context.Context, from, to name.Tag) (bool, error)

// ArtifactOptions control CopyArtifacts.
type ArtifactOptions struct {
	// Concurrency bounds how many digests are copied at once; 0 means 4.
	Concurrency int
	// Merge merges a tag that dst holds at another digest; nil leaves such
	// a tag alone.
	Merge MergeFunc
}

// ArtifactResult counts what CopyArtifacts wrote.
type ArtifactResult struct {
	// Tags counts cosign tags written (copied or merged), Referrers the
	// referrer manifests copied.
	Tags, Referrers int
}

// SignatureTag returns the tag cosign stores d's signatures at in repo, for
// suffix "sig" (or "att", "sbom"): sha256-<hex>.sig.
func SignatureTag(repo name.Repository, d v1.Hash, suffix string) name.Tag {
	return repo.Tag(fmt.Sprintf("%s-%s.%s", d.Algorithm, d.Hex, suffix))
}

// CopyArtifacts copies the artifact set of each digest from src to dst:
// the cosign signature, attestation and SBOM tags and every OCI 1.1
// referrer (read through the referrers API, or its fallback tag), keeping
// every manifest's exact bytes. A tag missing in src is skipped. A tag
// already in dst at the same digest is left alone; one at another digest
// is merged with o.Merge, as cosign does when it signs. Blobs are mounted
// when src and dst share a registry.
func (c *Client) CopyArtifacts(ctx context.Context, src, dst name.Repository, digests []v1.Hash, o ArtifactOptions) (*ArtifactResult, error) {
	ac, err := c.newArtifactCopier(ctx, src, dst, o)
	if err != nil {
		return nil, err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(o.concurrency())
	for _, d := range digests {
		g.Go(func() error {
			for _, sfx := range TagSuffixes {
				if err := ac.tag(gctx, SignatureTag(src, d, sfx), SignatureTag(dst, d, sfx)); err != nil {
					return err
				}
			}
			return ac.referrers(gctx, d)
		})
	}
	err = g.Wait()
	return &ArtifactResult{Tags: int(ac.tags.Load()), Referrers: int(ac.refs.Load())}, err
}

// pushJobs bounds the uploads of one cosign image: its layers and config.
const pushJobs = 2

func (o ArtifactOptions) concurrency() int {
	if o.Concurrency <= 0 {
		return 4
	}
	return o.Concurrency
}

type artifactCopier struct {
	c          *Client
	src, dst   name.Repository
	o          ArtifactOptions
	srcOpts    []remote.Option
	puller     *remote.Puller
	pusher     *remote.Pusher
	tags, refs atomic.Int64
}

// newArtifactCopier sizes source reads at twice the uploads that may run at
// once (pushJobs per digest): a transport that re-opens a request body for
// each attempt holds two reads of a source blob per streamed upload, and
// with go-containerregistry's pull limiter smaller than that a
// cross-registry copy would wait forever.
func (c *Client) newArtifactCopier(ctx context.Context, src, dst name.Repository, o ArtifactOptions) (*artifactCopier, error) {
	so, err := c.Remote(ctx, src)
	if err != nil {
		return nil, err
	}
	do, err := c.Remote(ctx, dst)
	if err != nil {
		return nil, err
	}
	p, err := remote.NewPuller(append(so, remote.WithJobs(2*pushJobs*o.concurrency()))...)
	if err != nil {
		return nil, fmt.Errorf("setting up registry client: %w", err)
	}
	w, err := remote.NewPusher(append(do, remote.WithJobs(pushJobs))...)
	if err != nil {
		return nil, fmt.Errorf("setting up registry client: %w", err)
	}
	return &artifactCopier{c: c, src: src, dst: dst, o: o, srcOpts: so, puller: p, pusher: w}, nil
}

// tag copies one artifact tag, or merges it into the one dst has.
func (ac *artifactCopier) tag(ctx context.Context, from, to name.Tag) error {
	desc, err := ac.puller.Get(ctx, from)
	if IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", from, err)
	}
	have, err := ac.c.Head(ctx, to)
	switch {
	case err != nil:
		return err
	case have == nil:
		if err := ac.pusher.Push(ctx, to, desc); err != nil {
			return fmt.Errorf("copying %s to %s: %w", from, to, err)
		}
	case *have == desc.Digest:
		return nil
	case ac.o.Merge == nil:
		return nil
	default:
		wrote, err := ac.o.Merge(ctx, from, to)
		if err != nil || !wrote {
			return err
		}
	}
	ac.c.log.Debug("copied artifact tag", "from", from.String(), "to", to.String())
	ac.tags.Add(1)
	return nil
}

// referrers copies every referrer of d that dst does not have.
func (ac *artifactCopier) referrers(ctx context.Context, d v1.Hash) error {
	subject := ac.src.Digest(d.String())
	idx, err := remote.Referrers(subject, append(ac.srcOpts[:len(ac.srcOpts):len(ac.srcOpts)], remote.WithContext(ctx))...)
	if err != nil {
		return fmt.Errorf("listing referrers of %s: %w", subject, err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return fmt.Errorf("listing referrers of %s: %w", subject, err)
	}
	for _, r := range im.Manifests {
		from, to := ac.src.Digest(r.Digest.String()), ac.dst.Digest(r.Digest.String())
		if have, err := ac.c.Head(ctx, to); err != nil {
			return err
		} else if have != nil {
			continue
		}
		desc, err := ac.puller.Get(ctx, from)
		if err != nil {
			return fmt.Errorf("reading referrer %s: %w", from, err)
		}
		if err := ac.pusher.Push(ctx, to, desc); err != nil {
			return fmt.Errorf("copying referrer %s: %w", from, err)
		}
		ac.c.log.Debug("copied referrer", "from", from.String(), "to", to.String())
		ac.refs.Add(1)
	}
	return nil
}

// PutReferrer PUTs m, a manifest with a subject, by digest into repo, and
// makes it findable as a referrer of its subject. This is what
// go-containerregistry does implicitly behind every manifest write that
// carries a subject; imgctl does it only here, by name, so that its cost
// is counted and the tag it writes is allowed on purpose:
//   - one GET of the referrers API (on a registry that serves it, the
//     registry then lists the referrer itself);
//   - on a registry without it (a 404, as the CNCF distribution registry
//     answers), with fallback, a GET and a PUT of the sha256-<subject hex>
//     fallback tag: an index of the subject's referrers, rewritten with the
//     new descriptor. The tag rule allows this write: the fallback tag is
//     not a release tag and is mutable by design. Without fallback, the
//     write fails.
func (c *Client) PutReferrer(ctx context.Context, repo name.Repository, m Manifest, fallback bool) error {
	raw, err := m.RawManifest()
	if err != nil {
		return err
	}
	h, _, err := v1.SHA256(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	opts, err := c.Remote(ctx, repo)
	if err != nil {
		return err
	}
	opts = append(opts, remote.WithReferrersTagFallback(fallback))
	if err := remote.Put(repo.Digest(h.String()), m, opts...); err != nil {
		return fmt.Errorf("writing referrer %s: %w", h, err)
	}
	return nil
}

// WriteArtifactTag writes img, an artifact built in memory such as the
// cosign signature image sign merges into a signature tag, to tag with
// go-containerregistry's remote.Write through the run's transport: its
// blobs, then its manifest. The tag rule does not apply: a cosign tag is
// rewritten with every signature added. A registry's immutability refusal
// is an ImmutableTagError, as for every tag write.
func (c *Client) WriteArtifactTag(ctx context.Context, tag name.Tag, img v1.Image) error {
	opts, err := c.Remote(ctx, tag.Context())
	if err != nil {
		return err
	}
	if err := remote.Write(tag, img, opts...); err != nil {
		return fmt.Errorf("writing %s: %w", tag, err)
	}
	return nil
}

// CheckReferrers fails with ErrReferrersUnsupported unless the registry
// serves the referrers API for subject's repository (one GET), so that a
// writer can refuse before it writes anything it cannot finish.
func (c *Client) CheckReferrers(ctx context.Context, subject name.Digest) error {
	opts, err := c.Remote(ctx, subject.Context())
	if err != nil {
		return err
	}
	if _, err := remote.Referrers(subject, append(opts, remote.WithReferrersTagFallback(false))...); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrReferrersUnsupported, subject.Context(), err)
	}
	return nil
}
