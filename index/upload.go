package index

import (
	"bytes"
	"context"
	"io"
	"net/http"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// upload writes a small in-memory blob (a config) into the repository with
// two requests: POST to open an upload, then PUT with the digest and the
// bytes, which every registry accepts. Callers fall back to the Pusher on
// error.
func (d *direct) upload(ctx context.Context, h v1.Hash, data []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.url("/v2/"+d.repo.RepositoryStr()+"/blobs/uploads/", nil), nil)
	if err != nil {
		return err
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err := transport.CheckError(resp, http.StatusAccepted); err != nil {
		return err
	}
	loc, err := resp.Location()
	if err != nil {
		return err
	}
	q := loc.Query()
	q.Set("digest", h.String())
	loc.RawQuery = q.Encode()
	put, err := http.NewRequestWithContext(ctx, http.MethodPut, loc.String(), bytes.NewReader(data))
	if err != nil {
		return err
	}
	put.Header.Set("Content-Type", "application/octet-stream")
	put.ContentLength = int64(len(data))
	presp, err := d.client.Do(put)
	if err != nil {
		return err
	}
	defer presp.Body.Close()
	_, _ = io.Copy(io.Discard, presp.Body)
	return transport.CheckError(presp, http.StatusCreated)
}
