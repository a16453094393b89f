package registry_test

import (
	"context"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/imgctl/imgctl/internal/testing/disttest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/registry"
)

// TestCopierHasAndCheckWrite against the CNCF distribution registry: Has
// answers a blob's presence with one HEAD (a 404 is false, not an error),
// and CheckWrite passes where the client may push and fails once the
// registry is read-only, leaving no upload behind either way.
func TestCopierHasAndCheckWrite(t *testing.T) {
	ctx := context.Background()
	r := disttest.New(t, disttest.Options{})
	img := regtest.Must(regtest.LinuxImage("amd64"))(t)
	if _, _, err := r.PushTag("a/app:1", img); err != nil {
		t.Fatal(err)
	}
	layer := regtest.Must(regtest.Must(img.Layers())(t)[0].Digest())(t)
	cp := registry.New().Copier(regtest.Must(name.NewRepository(r.Host() + "/a/app"))(t))
	other := registry.New().Copier(regtest.Must(name.NewRepository(r.Host() + "/b/app"))(t))
	for _, c := range []struct {
		cp   *registry.Copier
		want bool
	}{{cp, true}, {other, false}} {
		r.ResetRequests()
		got, err := c.cp.Has(ctx, layer)
		if err != nil || got != c.want {
			t.Errorf("%s: Has = %v, %v; want %v", c.cp.Repository(), got, err, c.want)
		}
		if n := r.Count("HEAD", "/blobs/"); n != 1 {
			t.Errorf("%s: %d blob HEADs, want 1", c.cp.Repository(), n)
		}
	}
	r.ResetRequests()
	if err := cp.CheckWrite(ctx); err != nil {
		t.Errorf("CheckWrite on a writable repository: %v", err)
	}
	if r.Count("POST", "/blobs/uploads/") != 1 || r.Count("DELETE", "/blobs/uploads/") != 1 {
		t.Errorf("CheckWrite sent %v, want one POST and the DELETE of its upload", r.Requests())
	}
	if err := r.RestartReadOnly(true); err != nil {
		t.Fatal(err)
	}
	if err := registry.New().Copier(cp.Repository()).CheckWrite(ctx); err == nil {
		t.Error("CheckWrite passed on a read-only registry")
	}
	if got, err := registry.New().Copier(cp.Repository()).Has(ctx, layer); err != nil || !got {
		t.Errorf("Has on a read-only registry: %v, %v", got, err)
	}
}
