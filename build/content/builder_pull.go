package content

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"

	contentapi "github.com/containerd/containerd/api/services/content/v1"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/moby/buildkit/client"
	"github.com/moby/buildkit/client/llb"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
	"github.com/moby/buildkit/session"

	"github.com/imgctl/imgctl/platform"
)

// PullThroughBuilder has the builder pull image ref (NAME@DIGEST) for
// plat the way its solves would, through its own registry configuration:
// its mirrors, its TLS and the session's credentials. A site whose
// registries only the builder reaches (a mirror, an air gap) keeps the
// graft this way: while the pulled layers are held, fn reads them from the
// daemon's content store (DaemonLayer) to make their skeletons and to put
// them into the tag's repository. The base is unpacked once on the builder
// (a stat of its root makes BuildKit fetch every layer; BuildKit has no
// request that fetches a layer without unpacking it).
func PullThroughBuilder(ctx context.Context, c *client.Client, att []session.Attachable, ref string, plat v1.Platform,
	status chan *client.SolveStatus, fn func(ctx context.Context, content contentapi.ContentClient) error) error {
	var fnErr error
	_, err := c.Build(ctx, client.SolveOpt{Session: att, Internal: true}, "imgctl", func(ctx context.Context, gw gateway.Client) (*gateway.Result, error) {
		def, err := llb.Image(ref, llb.Platform(platform.ToSpec(plat))).Marshal(ctx)
		if err != nil {
			return nil, err
		}
		res, err := gw.Solve(ctx, gateway.SolveRequest{Definition: def.ToPB(), Evaluate: true})
		if err != nil {
			return nil, err
		}
		r, err := res.SingleRef()
		if err != nil {
			return nil, err
		}
		if _, err := r.StatFile(ctx, gateway.StatRequest{Path: "/"}); err != nil {
			return nil, fmt.Errorf("unpacking %s on the builder: %w", ref, err)
		}
		fnErr = fn(ctx, c.ContentClient())
		return gateway.NewResult(), nil
	}, status)
	if fnErr != nil {
		return fnErr
	}
	if err != nil {
		return fmt.Errorf("pulling %s through the builder: %w", ref, err)
	}
	return nil
}

// DaemonLayer is layer d read from a daemon's content store, streamed
// (never held whole), its digest and size checked at the end of every
// stream: a layer of gigabytes goes through in constant memory.
func DaemonLayer(ctx context.Context, content contentapi.ContentClient, d v1.Descriptor) (v1.Layer, error) {
	return partial.CompressedToLayer(&daemonBlob{ctx: ctx, content: content, d: d})
}

// daemonBlob is partial.CompressedLayer over the content store.
type daemonBlob struct {
	ctx     context.Context
	content contentapi.ContentClient
	d       v1.Descriptor
}

// Digest is the descriptor's.
func (b *daemonBlob) Digest() (v1.Hash, error) { return b.d.Digest, nil }

// Size is the descriptor's.
func (b *daemonBlob) Size() (int64, error) { return b.d.Size, nil }

// MediaType is the descriptor's.
func (b *daemonBlob) MediaType() (types.MediaType, error) { return b.d.MediaType, nil }

// Compressed opens a stream of the blob.
func (b *daemonBlob) Compressed() (io.ReadCloser, error) {
	ctx, cancel := context.WithCancel(b.ctx)
	rc, err := b.content.Read(ctx, &contentapi.ReadContentRequest{Digest: b.d.Digest.String()})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("reading blob %s from the builder: %w", b.d.Digest, err)
	}
	return &contentStream{rc: rc, cancel: cancel, h: sha256.New(), d: b.d}, nil
}

// contentStream reads a content store's Read stream, chunk by chunk.
type contentStream struct {
	rc     contentapi.Content_ReadClient
	cancel context.CancelFunc
	h      hash.Hash
	n      int64
	d      v1.Descriptor
	buf    []byte
	err    error
}

// Read returns the blob's bytes; at the end, io.EOF only if the digest
// and size are the descriptor's.
func (s *contentStream) Read(p []byte) (int, error) {
	for len(s.buf) == 0 && s.err == nil {
		r, err := s.rc.Recv()
		switch {
		case errors.Is(err, io.EOF):
			s.err = io.EOF
			if got := hex.EncodeToString(s.h.Sum(nil)); got != s.d.Digest.Hex || s.n != s.d.Size {
				s.err = fmt.Errorf("blob %s from the builder: %d bytes of digest sha256:%s", s.d.Digest, s.n, got)
			}
		case err != nil:
			s.err = err
		default:
			s.buf = r.Data
			s.h.Write(r.Data)
			s.n += int64(len(r.Data))
		}
	}
	if len(s.buf) > 0 {
		n := copy(p, s.buf)
		s.buf = s.buf[n:]
		return n, nil
	}
	return 0, s.err
}

// Close ends the stream.
func (s *contentStream) Close() error {
	s.cancel()
	return nil
}
