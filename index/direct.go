package index

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// direct is a client of the target repository that mounts a blob with one
// POST, without the HEAD go-containerregistry sends first (a mount of a blob
// the target already has answers 201 too), and PUTs manifests without
// another authentication round. It is used only when Options.Transport is
// set; anything it cannot do falls back to the go-containerregistry Pusher.
type direct struct {
	client *http.Client
	repo   name.Repository
	done   sync.Map // digest -> *mountOnce
}

type mountOnce struct {
	once sync.Once
	ok   bool
}

// newDirect authenticates once with push scope on target and pull scope on
// each source repository of the same registry.
func newDirect(ctx context.Context, o *Options, target name.Repository, sources []name.Reference) (*direct, error) {
	kc := o.Keychain
	if kc == nil {
		kc = authn.DefaultKeychain
	}
	auth, err := authn.Resolve(ctx, kc, target)
	if err != nil {
		return nil, fmt.Errorf("resolving credentials for %s: %w", target, err)
	}
	scopes := []string{target.Scope(transport.PushScope)}
	seen := map[string]bool{target.Name(): true}
	for _, ref := range sources {
		src := ref.Context()
		if mountable(src, target) && !seen[src.Name()] {
			seen[src.Name()] = true
			scopes = append(scopes, src.Scope(transport.PullScope))
		}
	}
	rt, err := transport.NewWithContext(ctx, target.Registry, auth, o.Transport, scopes)
	if err != nil {
		return nil, fmt.Errorf("authenticating to %s: %w", target, err)
	}
	return &direct{client: &http.Client{Transport: rt}, repo: target}, nil
}

// mountable reports whether blobs of src can be mounted into target.
func mountable(src, target name.Repository) bool {
	return src.RegistryStr() == target.RegistryStr() && src.Name() != target.Name()
}

func (d *direct) url(path string, q url.Values) string {
	u := url.URL{Scheme: d.repo.Scheme(), Host: d.repo.RegistryStr(), Path: path, RawQuery: q.Encode()}
	return u.String()
}

// mount mounts blob h from repository from, once per digest. It reports
// false when the registry did not mount (the upload it opened is cancelled).
func (d *direct) mount(ctx context.Context, h v1.Hash, from name.Repository) bool {
	v, _ := d.done.LoadOrStore(h, &mountOnce{})
	m := v.(*mountOnce)
	m.once.Do(func() { m.ok = d.tryMount(ctx, h, from) })
	return m.ok
}

func (d *direct) tryMount(ctx context.Context, h v1.Hash, from name.Repository) bool {
	q := url.Values{"mount": {h.String()}, "from": {from.RepositoryStr()}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.url("/v2/"+d.repo.RepositoryStr()+"/blobs/uploads/", q), nil)
	if err != nil {
		return false
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode == http.StatusAccepted {
		d.cancel(ctx, resp)
	}
	return resp.StatusCode == http.StatusCreated
}

// cancel deletes the upload session a refused mount opened.
func (d *direct) cancel(ctx context.Context, resp *http.Response) {
	loc, err := resp.Location()
	if err != nil || loc.Host != resp.Request.URL.Host {
		return
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, loc.String(), nil)
	if err != nil {
		return
	}
	if r, err := d.client.Do(req); err == nil {
		r.Body.Close()
	}
}

// head returns the digest a manifest reference points at, nil when absent.
func (d *direct) head(ctx context.Context, ref string) (*v1.Hash, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, d.url("/v2/"+d.repo.RepositoryStr()+"/manifests/"+ref, nil), nil)
	if err != nil {
		return nil, err
	}
	for _, mt := range []types.MediaType{types.OCIImageIndex, types.OCIManifestSchema1, types.DockerManifestList, types.DockerManifestSchema2} {
		req.Header.Add("Accept", string(mt))
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil, nil
	}
	if err := transport.CheckError(resp, http.StatusOK); err != nil {
		return nil, err
	}
	h, err := v1.NewHash(resp.Header.Get("Docker-Content-Digest"))
	if err != nil {
		return nil, fmt.Errorf("reading the digest of %s: %w", ref, err)
	}
	return &h, nil
}

// put PUTs a manifest with its exact bytes.
func (d *direct) put(ctx context.Context, ref string, mt types.MediaType, raw []byte) error {
	u := d.url("/v2/"+d.repo.RepositoryStr()+"/manifests/"+ref, nil)
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, u, bytes.NewReader(raw))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", string(mt))
	resp, err := d.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return transport.CheckError(resp, http.StatusOK, http.StatusCreated, http.StatusAccepted)
}
