package registry

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"
)

// Manifest is what Put needs of a manifest: its exact bytes and media type
// (a v1.Image, a v1.ImageIndex and RawManifest all are one).
type Manifest interface {
	RawManifest() ([]byte, error)
	MediaType() (types.MediaType, error)
}

// RawManifest is a manifest held as its exact bytes.
type RawManifest struct {
	Raw  []byte
	Type types.MediaType
}

// RawManifest returns the bytes.
func (r RawManifest) RawManifest() ([]byte, error) { return r.Raw, nil }

// MediaType returns the media type.
func (r RawManifest) MediaType() (types.MediaType, error) { return r.Type, nil }

// Copier makes manifests and blobs present in one repository. Blobs of
// another repository of the same registry are mounted with one POST each
// and never pass through the client; blobs of another registry stream
// through go-containerregistry's Pusher; at most Jobs blobs move at once.
// Each digest is mounted once per Copier.
//
// The mount is written here rather than left to go-containerregistry's
// Pusher, which sends a HEAD before every mount (one request more per blob:
// a mount of a blob the target already has answers 201 as well), and the
// manifest PUT is written here so that it carries the exact bytes and never
// triggers the Pusher's implicit referrers-tag rewrite (see PutReferrer).
type Copier struct {
	c      *Client
	repo   name.Repository
	blobs  *semaphore.Weighted
	mounts sync.Map // digest -> *mountOnce

	once   sync.Once
	pusher *remote.Pusher
	err    error
}

type mountOnce struct {
	once sync.Once
	ok   bool
}

// Copier returns a Copier into repo.
func (c *Client) Copier(repo name.Repository) *Copier {
	return &Copier{c: c, repo: repo, blobs: semaphore.NewWeighted(int64(c.Jobs()))}
}

// Repository is the repository the Copier writes to.
func (cp *Copier) Repository() name.Repository { return cp.repo }

func (cp *Copier) getPusher(ctx context.Context) (*remote.Pusher, error) {
	cp.once.Do(func() {
		opts, err := cp.c.Remote(ctx, cp.repo)
		if err != nil {
			cp.err = err
			return
		}
		cp.pusher, cp.err = remote.NewPusher(opts...)
	})
	return cp.pusher, cp.err
}

// do sends one request to the target registry through its authenticated
// transport and returns the response with its body (at most 64 KiB, an
// error's details) held in memory, so that transport.CheckError can read
// the registry's error codes.
func (cp *Copier) do(ctx context.Context, method, u string, body []byte, header http.Header) (*http.Response, error) {
	rt, err := cp.c.Transport(ctx, cp.repo)
	if err != nil {
		return nil, err
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := (&http.Client{Transport: rt}).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading the response: %w", method, req.URL.Redacted(), err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp, nil
}

func (cp *Copier) url(path string, q url.Values) string {
	u := url.URL{Scheme: cp.repo.Scheme(), Host: cp.repo.RegistryStr(), Path: path, RawQuery: q.Encode()}
	return u.String()
}

// Mountable reports whether blobs of src can be mounted into dst: another
// repository of the same registry.
func Mountable(src, dst name.Repository) bool {
	return src.RegistryStr() == dst.RegistryStr() && src.Name() != dst.Name()
}

// Mount mounts blob h from repository from, once per digest. It reports
// false when the registry did not mount (the upload it opened is
// cancelled), and the caller then uploads.
func (cp *Copier) Mount(ctx context.Context, h v1.Hash, from name.Repository) bool {
	v, _ := cp.mounts.LoadOrStore(h, &mountOnce{})
	m := v.(*mountOnce)
	m.once.Do(func() { m.ok = cp.tryMount(ctx, h, from) })
	return m.ok
}

// TryMount is Mount as one of the Copier's Jobs blob moves at a time: it
// reports false, without a request, when ctx ends while it waits.
func (cp *Copier) TryMount(ctx context.Context, h v1.Hash, from name.Repository) bool {
	if err := cp.blobs.Acquire(ctx, 1); err != nil {
		return false
	}
	defer cp.blobs.Release(1)
	return cp.Mount(ctx, h, from)
}

func (cp *Copier) tryMount(ctx context.Context, h v1.Hash, from name.Repository) bool {
	q := url.Values{"mount": {h.String()}, "from": {from.RepositoryStr()}}
	resp, err := cp.do(ctx, http.MethodPost, cp.url("/v2/"+cp.repo.RepositoryStr()+"/blobs/uploads/", q), nil, nil)
	if err != nil {
		return false
	}
	if resp.StatusCode == http.StatusAccepted {
		cp.cancel(ctx, resp)
	}
	return resp.StatusCode == http.StatusCreated
}

// cancel deletes the upload session a refused mount opened.
func (cp *Copier) cancel(ctx context.Context, resp *http.Response) {
	loc, err := resp.Location()
	if err != nil || loc.Host != resp.Request.URL.Host {
		return
	}
	_, _ = cp.do(ctx, http.MethodDelete, loc.String(), nil, nil)
}

// Has reports whether the Copier's repository holds blob h: one HEAD. A
// registry's 404 is false with no error; anything else but 200 is an
// error.
func (cp *Copier) Has(ctx context.Context, h v1.Hash) (bool, error) {
	resp, err := cp.do(ctx, http.MethodHead, cp.url("/v2/"+cp.repo.RepositoryStr()+"/blobs/"+h.String(), nil), nil, nil)
	if err != nil {
		return false, fmt.Errorf("checking blob %s in %s: %w", h, cp.repo, err)
	}
	switch resp.StatusCode {
	case http.StatusOK:
		return true, nil
	case http.StatusNotFound:
		return false, nil
	}
	return false, fmt.Errorf("checking blob %s in %s: %w", h, cp.repo, transport.CheckError(resp, http.StatusOK))
}

// CheckWrite reports whether the Copier may write to its repository: it
// opens a blob upload, which a registry grants only to a client allowed to
// push there, and cancels it. Two requests; nothing is written. The error
// is the registry's refusal (401, 403, DENIED), or a transport error.
func (cp *Copier) CheckWrite(ctx context.Context) error {
	resp, err := cp.do(ctx, http.MethodPost, cp.url("/v2/"+cp.repo.RepositoryStr()+"/blobs/uploads/", nil), nil, nil)
	if err == nil {
		err = transport.CheckError(resp, http.StatusAccepted)
	}
	if err != nil {
		return fmt.Errorf("opening an upload in %s: %w", cp.repo, err)
	}
	cp.cancel(ctx, resp)
	return nil
}

// UploadBytes writes a small in-memory blob (a config) with two requests:
// POST to open an upload, then PUT with the digest and the bytes, which
// every registry accepts (the Pusher would HEAD first).
func (cp *Copier) UploadBytes(ctx context.Context, h v1.Hash, data []byte) error {
	if err := cp.blobs.Acquire(ctx, 1); err != nil {
		return err
	}
	defer cp.blobs.Release(1)
	resp, err := cp.do(ctx, http.MethodPost, cp.url("/v2/"+cp.repo.RepositoryStr()+"/blobs/uploads/", nil), nil, nil)
	if err != nil {
		return fmt.Errorf("uploading blob %s: %w", h, err)
	}
	if err := transport.CheckError(resp, http.StatusAccepted); err != nil {
		return fmt.Errorf("uploading blob %s: %w", h, err)
	}
	loc, err := resp.Location()
	if err != nil {
		return fmt.Errorf("uploading blob %s: %w", h, err)
	}
	q := loc.Query()
	q.Set("digest", h.String())
	loc.RawQuery = q.Encode()
	presp, err := cp.do(ctx, http.MethodPut, loc.String(), data, http.Header{"Content-Type": {"application/octet-stream"}})
	if err == nil {
		err = transport.CheckError(presp, http.StatusCreated)
	}
	if err != nil {
		return fmt.Errorf("uploading blob %s: %w", h, err)
	}
	return nil
}

// Blob makes layer l, read from repository from, present: nothing for a
// foreign (non-distributable) layer or one already in the target
// repository; a mount within a registry; else a streamed upload.
func (cp *Copier) Blob(ctx context.Context, l v1.Layer, from name.Repository) error {
	mt, err := l.MediaType()
	if err != nil || !mt.IsDistributable() || from.Name() == cp.repo.Name() {
		return err
	}
	d, err := l.Digest()
	if err != nil {
		return fmt.Errorf("reading blob digest: %w", err)
	}
	if err := cp.blobs.Acquire(ctx, 1); err != nil {
		return err
	}
	defer cp.blobs.Release(1)
	if Mountable(from, cp.repo) && cp.Mount(ctx, d, from) {
		return nil
	}
	p, err := cp.getPusher(ctx)
	if err == nil {
		err = p.Upload(ctx, cp.repo, l)
	}
	if err != nil {
		return fmt.Errorf("copying blob %s: %w", d, err)
	}
	return nil
}

// RemoteBlob makes blob d of repository from present, by mount or by
// streaming it (see Blob).
func (cp *Copier) RemoteBlob(ctx context.Context, d v1.Hash, mt types.MediaType, from name.Repository) error {
	if !mt.IsDistributable() || from.Name() == cp.repo.Name() {
		return nil
	}
	if Mountable(from, cp.repo) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if cp.TryMount(ctx, d, from) {
			return nil
		}
	}
	l, err := cp.c.Layer(ctx, from.Digest(d.String()))
	if err != nil {
		return err
	}
	return cp.Blob(ctx, l, from)
}

// Image makes img, read from repository from, present as dst: its layers
// and config (concurrently, see Blob), then its manifest with its exact
// bytes.
func (cp *Copier) Image(ctx context.Context, img v1.Image, from name.Repository, dst name.Digest) error {
	ls, err := img.Layers()
	if err != nil {
		return fmt.Errorf("reading layers of %s: %w", dst, err)
	}
	cl, err := partial.ConfigLayer(img)
	if err != nil {
		return fmt.Errorf("reading config of %s: %w", dst, err)
	}
	g, gctx := errgroup.WithContext(ctx)
	for _, l := range append(ls, cl) {
		g.Go(func() error { return cp.Blob(gctx, l, from) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return cp.Put(ctx, dst, img)
}

// Push copies desc and everything it references (children of an index,
// their blobs) to dst with go-containerregistry's Pusher, which mounts
// within a registry.
func (cp *Copier) Push(ctx context.Context, dst name.Reference, desc *remote.Descriptor) error {
	p, err := cp.getPusher(ctx)
	if err == nil {
		err = p.Push(ctx, dst, desc)
	}
	if err != nil {
		return fmt.Errorf("copying %s to %s: %w", desc.Digest, dst, err)
	}
	return nil
}

// Put PUTs a manifest with its exact bytes at ref (a tag or digest of the
// Copier's repository). It never rewrites a referrers fallback tag, even
// for a manifest with a subject: see PutReferrer.
func (cp *Copier) Put(ctx context.Context, ref name.Reference, m Manifest) error {
	raw, err := m.RawManifest()
	if err != nil {
		return err
	}
	mt, err := m.MediaType()
	if err != nil {
		return err
	}
	resp, err := cp.do(ctx, http.MethodPut, cp.url("/v2/"+cp.repo.RepositoryStr()+"/manifests/"+ref.Identifier(), nil), raw,
		http.Header{"Content-Type": {string(mt)}})
	if err == nil {
		err = transport.CheckError(resp, http.StatusOK, http.StatusCreated, http.StatusAccepted)
	}
	if err != nil {
		return fmt.Errorf("pushing manifest %s: %w", ref, err)
	}
	return nil
}

// Upload writes layer l, held by the caller (a signature, a config), into
// the Copier's repository with go-containerregistry's Pusher.
func (cp *Copier) Upload(ctx context.Context, l v1.Layer) error {
	if err := cp.blobs.Acquire(ctx, 1); err != nil {
		return err
	}
	defer cp.blobs.Release(1)
	p, err := cp.getPusher(ctx)
	if err == nil {
		err = p.Upload(ctx, cp.repo, l)
	}
	if err != nil {
		return fmt.Errorf("uploading blob: %w", err)
	}
	return nil
}
