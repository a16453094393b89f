package sign

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"golang.org/x/sync/errgroup"
)

// TagSuffixes are the cosign tag suffixes CopySignatures copies:
// signatures, attestations and SBOMs.
var TagSuffixes = []string{"sig", "att", "sbom"}

// CopyOptions control CopySignatures.
type CopyOptions struct {
	// Remote are the go-containerregistry options for every request.
	Remote []remote.Option
	// Concurrency bounds how many digests are copied at once; 0 means 4.
	Concurrency int
	// Logger receives progress at debug level; nil discards.
	Logger *slog.Logger
}

// CopyResult counts what CopySignatures wrote.
type CopyResult struct {
	// Tags counts cosign tags written (copied or merged), Referrers the
	// referrer manifests copied.
	Tags, Referrers int
}

// SignatureTag returns the tag cosign stores d's signatures at in repo, for
// suffix "sig" (or "att", "sbom"): sha256-<hex>.sig.
func SignatureTag(repo name.Repository, d v1.Hash, suffix string) name.Tag {
	return repo.Tag(fmt.Sprintf("%s-%s.%s", d.Algorithm, d.Hex, suffix))
}

// CopySignatures copies, for each digest, the cosign signature, attestation
// and SBOM tags and every OCI 1.1 referrer (read through the referrers API,
// or its fallback tag) from src to dst, keeping every manifest's exact
// bytes. A tag missing in src is skipped. A tag already in dst at the same
// digest is left alone; one at another digest gets src's missing
// signatures appended, as cosign does when it signs. Blobs are mounted
// when src and dst share a registry.
func CopySignatures(ctx context.Context, src, dst name.Repository, digests []v1.Hash, o CopyOptions) (*CopyResult, error) {
	c, err := newCopier(src, dst, o)
	if err != nil {
		return nil, err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(o.concurrency())
	for _, d := range digests {
		g.Go(func() error {
			for _, sfx := range TagSuffixes {
				if err := c.tag(gctx, SignatureTag(src, d, sfx), SignatureTag(dst, d, sfx)); err != nil {
					return err
				}
			}
			return c.referrers(gctx, d)
		})
	}
	err = g.Wait()
	return &CopyResult{Tags: int(c.tags.Load()), Referrers: int(c.refs.Load())}, err
}

// pushJobs bounds the uploads of one cosign image: its layers and config.
const pushJobs = 2

func (o CopyOptions) concurrency() int {
	if o.Concurrency <= 0 {
		return 4
	}
	return o.Concurrency
}

type copier struct {
	src, dst   name.Repository
	o          CopyOptions
	log        *slog.Logger
	puller     *remote.Puller
	pusher     *remote.Pusher
	tags, refs atomic.Int64
}

// newCopier sizes source reads at twice the uploads that may run at once
// (pushJobs per digest): a transport that re-opens a request body for each
// attempt holds two reads of a source blob per streamed upload, and with
// go-containerregistry's pull limiter smaller than that a cross-registry
// copy would wait forever.
func newCopier(src, dst name.Repository, o CopyOptions) (*copier, error) {
	ro := o.Remote[:len(o.Remote):len(o.Remote)]
	p, err := remote.NewPuller(append(ro, remote.WithJobs(2*pushJobs*o.concurrency()))...)
	if err != nil {
		return nil, fmt.Errorf("setting up registry client: %w", err)
	}
	w, err := remote.NewPusher(append(ro, remote.WithJobs(pushJobs))...)
	if err != nil {
		return nil, fmt.Errorf("setting up registry client: %w", err)
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &copier{src: src, dst: dst, o: o, log: log, puller: p, pusher: w}, nil
}

// tag copies one cosign tag, or merges it into the one dst has.
func (c *copier) tag(ctx context.Context, from, to name.Tag) error {
	desc, err := c.puller.Get(ctx, from)
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", from, err)
	}
	have, err := c.puller.Head(ctx, to)
	switch {
	case isNotFound(err):
		if err := c.pusher.Push(ctx, to, desc); err != nil {
			return fmt.Errorf("copying %s to %s: %w", from, to, err)
		}
	case err != nil:
		return fmt.Errorf("checking %s: %w", to, err)
	case have.Digest == desc.Digest:
		return nil
	default:
		wrote, err := c.merge(ctx, from, to)
		if err != nil || !wrote {
			return err
		}
	}
	c.log.Debug("copied cosign tag", "from", from.String(), "to", to.String())
	c.tags.Add(1)
	return nil
}

// referrers copies every referrer of d that dst does not have.
func (c *copier) referrers(ctx context.Context, d v1.Hash) error {
	idx, err := remote.Referrers(c.src.Digest(d.String()), append(c.o.Remote[:len(c.o.Remote):len(c.o.Remote)], remote.WithContext(ctx))...)
	if err != nil {
		return fmt.Errorf("listing referrers of %s: %w", c.src.Digest(d.String()), err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return fmt.Errorf("listing referrers of %s: %w", c.src.Digest(d.String()), err)
	}
	for _, r := range im.Manifests {
		from, to := c.src.Digest(r.Digest.String()), c.dst.Digest(r.Digest.String())
		if _, err := c.puller.Head(ctx, to); err == nil {
			continue
		} else if !isNotFound(err) {
			return fmt.Errorf("checking %s: %w", to, err)
		}
		desc, err := c.puller.Get(ctx, from)
		if err != nil {
			return fmt.Errorf("reading referrer %s: %w", from, err)
		}
		if err := c.pusher.Push(ctx, to, desc); err != nil {
			return fmt.Errorf("copying referrer %s: %w", from, err)
		}
		c.log.Debug("copied referrer", "from", from.String(), "to", to.String())
		c.refs.Add(1)
	}
	return nil
}

func isNotFound(err error) bool {
	var terr *transport.Error
	return errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound
}
