package registry

import (
	"context"
	"fmt"
	"io"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/snapshot"
)

// Get reads the manifest ref points at, index or image, with one GET.
// Reads through the descriptor may run twice Jobs at once: a transport
// that re-opens a request body for each attempt (as the retrying one may)
// holds two reads of a source blob per streamed upload, and with
// go-containerregistry's pull limiter no larger than the uploads (Jobs), a
// cross-registry copy would wait forever.
func (c *Client) Get(ctx context.Context, ref name.Reference) (*remote.Descriptor, error) {
	opts, err := c.Remote(ctx, ref.Context())
	if err != nil {
		return nil, err
	}
	desc, err := remote.Get(ref, append(opts, remote.WithJobs(2*c.Jobs()))...)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", ref, err)
	}
	return desc, nil
}

// Head returns the digest ref points at, or nil when it does not exist (a
// 404). It is the one "check a tag" of imgctl: one HEAD request.
func (c *Client) Head(ctx context.Context, ref name.Reference) (*v1.Hash, error) {
	d, err := c.head(ctx, ref)
	if IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("checking %s: %w", ref, err)
	}
	return &d.Digest, nil
}

// Fetched is a reference as read: its descriptor and either its index or
// its image.
type Fetched struct {
	Ref   name.Reference
	Desc  *remote.Descriptor
	Index v1.ImageIndex // nil for a single image
	Image v1.Image      // nil for an index
}

// Fetch reads ref as an index or a single image.
func (c *Client) Fetch(ctx context.Context, ref name.Reference) (*Fetched, error) {
	desc, err := c.Get(ctx, ref)
	if err != nil {
		return nil, err
	}
	f := &Fetched{Ref: ref, Desc: desc}
	switch {
	case desc.MediaType.IsIndex():
		f.Index, err = desc.ImageIndex()
	case desc.MediaType.IsImage():
		f.Image, err = desc.Image()
	default:
		err = fmt.Errorf("%w %q", ErrUnsupportedMediaType, desc.MediaType)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", ref, err)
	}
	return f, nil
}

// ReadIndex returns the index desc holds and its parsed manifest, from the
// bytes already read (no request), or ErrNotAnIndex when desc is an image
// or anything else; errors name ref, what desc was read as. Every reader
// of an index from a descriptor goes through it.
func ReadIndex(ref name.Reference, desc *remote.Descriptor) (v1.ImageIndex, *v1.IndexManifest, error) {
	if !desc.MediaType.IsIndex() {
		return nil, nil, fmt.Errorf("%s: %w (media type %s)", ref, ErrNotAnIndex, desc.MediaType)
	}
	idx, err := desc.ImageIndex()
	if err != nil {
		return nil, nil, fmt.Errorf("reading index %s: %w", ref, err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, nil, fmt.Errorf("reading index %s: %w", ref, err)
	}
	return idx, im, nil
}

// Snapshot reads what verify judges of f: the index with each child's
// manifest and config (never a layer), or the single image and its config.
func (f *Fetched) Snapshot(ctx context.Context) (*snapshot.Snapshot, error) {
	if f.Index != nil {
		return snapshot.LoadIndex(ctx, f.Index, snapshot.DefaultConcurrency)
	}
	return snapshot.LoadImage(f.Image)
}

// Snapshot reads ref as a snapshot: one GET for ref, then, for an index,
// each child's manifest and config.
func (c *Client) Snapshot(ctx context.Context, ref name.Reference) (*Fetched, *snapshot.Snapshot, error) {
	f, err := c.Fetch(ctx, ref)
	if err != nil {
		return nil, nil, err
	}
	s, err := f.Snapshot(ctx)
	if err != nil {
		return f, nil, fmt.Errorf("%s: %w", ref, err)
	}
	return f, s, nil
}

// Layer returns the blob ref names (repository@digest); its content is
// read, and checked against the digest, when opened.
func (c *Client) Layer(ctx context.Context, ref name.Digest) (v1.Layer, error) {
	opts, err := c.Remote(ctx, ref.Context())
	if err != nil {
		return nil, err
	}
	l, err := remote.Layer(ref, opts...)
	if err != nil {
		return nil, fmt.Errorf("reading blob %s: %w", ref, err)
	}
	return l, nil
}

// SmallBlob reads blob ref (repository@digest) whole: a config or an
// attestation payload, at most MaxManifestSize bytes; the content is
// checked against the digest.
func (c *Client) SmallBlob(ctx context.Context, ref name.Digest) ([]byte, error) {
	l, err := c.Layer(ctx, ref)
	if err != nil {
		return nil, err
	}
	rc, err := l.Compressed()
	if err != nil {
		return nil, fmt.Errorf("reading blob %s: %w", ref, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, MaxManifestSize+1)) // the fetcher verifies the digest at EOF
	if err != nil {
		return nil, fmt.Errorf("reading blob %s: %w", ref, err)
	}
	if len(b) > MaxManifestSize {
		return nil, fmt.Errorf("blob %s: %w: over the %d-byte limit", ref, ErrManifestTooLarge, MaxManifestSize)
	}
	return b, nil
}

// Describe returns the descriptor of the manifest ref points at (media
// type, digest, size) with one HEAD.
func (c *Client) Describe(ctx context.Context, ref name.Reference) (*v1.Descriptor, error) {
	d, err := c.head(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("describing %s: %w", ref, err)
	}
	return d, nil
}

func (c *Client) head(ctx context.Context, ref name.Reference) (*v1.Descriptor, error) {
	opts, err := c.Remote(ctx, ref.Context())
	if err != nil {
		return nil, err
	}
	return remote.Head(ref, opts...)
}
