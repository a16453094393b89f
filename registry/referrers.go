package registry

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// ReferrersTag returns the referrers tag fallback of subject, the tag a
// writer keeps an index of subject's referrers at on a registry without
// the referrers API: sha256-<hex> in subject's repository (OCI
// distribution spec 1.1, "Referrers Tag Schema").
func ReferrersTag(subject name.Digest) (name.Tag, error) {
	h, err := v1.NewHash(subject.DigestStr())
	if err != nil {
		return name.Tag{}, fmt.Errorf("%w %q: %w", ErrInvalidReference, subject, err)
	}
	return subject.Context().Tag(h.Algorithm + "-" + h.Hex), nil
}

// referrersSupport is what a run learnt of one registry: whether it serves
// the referrers API.
type referrersSupport struct {
	mu         sync.Mutex
	known, api bool
}

func (c *Client) referrersSupport(registry string) *referrersSupport {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.refs == nil {
		c.refs = map[string]*referrersSupport{}
	}
	s := c.refs[registry]
	if s == nil {
		s = &referrersSupport{}
		c.refs[registry] = s
	}
	return s
}

// Referrers lists the referrers of subject whose artifactType is
// artifactType ("" for all) with one read: the referrers API on a registry
// that serves it, else the referrers tag fallback (see ReferrersTag), whose
// absence is an empty list. The first call for a registry asks the API and
// remembers the answer, so that on a registry without it (the CNCF
// distribution registry) each later call is one GET of the fallback tag,
// not a 404 and then the tag as go-containerregistry's remote.Referrers
// would send. A registry error (see IsRegistryError) is returned as such,
// never as "no referrers".
func (c *Client) Referrers(ctx context.Context, subject name.Digest, artifactType string) ([]v1.Descriptor, error) {
	s := c.referrersSupport(subject.RegistryStr())
	s.mu.Lock()
	if !s.known {
		// The first caller asks; the others wait for its answer.
		list, api, err := c.referrersAPI(ctx, subject)
		if err == nil {
			s.known, s.api = true, api
		}
		s.mu.Unlock()
		if err != nil || api {
			return filterArtifactType(list, artifactType), err
		}
		return c.referrersFallback(ctx, subject, artifactType)
	}
	api := s.api
	s.mu.Unlock()
	if !api {
		return c.referrersFallback(ctx, subject, artifactType)
	}
	list, _, err := c.referrersAPI(ctx, subject)
	return filterArtifactType(list, artifactType), err
}

// referrersAPI asks the referrers API; api is false, with no error, when
// the registry does not serve it (a 404, HTML or not, or an answer that is
// not an index, as go-containerregistry tells).
func (c *Client) referrersAPI(ctx context.Context, subject name.Digest) (list []v1.Descriptor, api bool, err error) {
	opts, err := c.Remote(ctx, subject.Context())
	if err != nil {
		return nil, false, err
	}
	idx, err := remote.Referrers(subject, append(opts, remote.WithReferrersTagFallback(false))...)
	if err != nil && !IsRegistryError(err) {
		return nil, false, nil // "does not support the Referrers API"
	}
	if err != nil {
		return nil, false, fmt.Errorf("listing referrers of %s: %w", subject, err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, false, fmt.Errorf("listing referrers of %s: %w", subject, err)
	}
	return im.Manifests, true, nil
}

// referrersFallback reads the referrers tag fallback of subject.
func (c *Client) referrersFallback(ctx context.Context, subject name.Digest, artifactType string) ([]v1.Descriptor, error) {
	tag, err := ReferrersTag(subject)
	if err != nil {
		return nil, err
	}
	desc, err := c.Get(ctx, tag)
	if IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing referrers of %s: %w", subject, err)
	}
	im, err := v1.ParseIndexManifest(bytes.NewReader(desc.Manifest))
	if err != nil {
		return nil, fmt.Errorf("listing referrers of %s: reading %s: %w", subject, tag, err)
	}
	return filterArtifactType(im.Manifests, artifactType), nil
}

func filterArtifactType(list []v1.Descriptor, artifactType string) []v1.Descriptor {
	if artifactType == "" {
		return list
	}
	var out []v1.Descriptor
	for _, d := range list {
		if d.ArtifactType == artifactType {
			out = append(out, d)
		}
	}
	return out
}
