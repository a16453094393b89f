package registry

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// TestReadIndex: an index read with Get parses into its manifest list with
// no further request; an image is ErrNotAnIndex, naming the reference.
func TestReadIndex(t *testing.T) {
	ctx := context.Background()
	reg := regtest.New(t)
	repo := regtest.Must(reg.Repo("app"))(t)
	_, d := pushedIndex(t, repo, "read-index")
	c := New()
	desc, err := c.Get(ctx, repo.Digest(d.String()))
	if err != nil {
		t.Fatal(err)
	}
	before := c.Requests()
	idx, im, err := ReadIndex(repo.Digest(d.String()), desc)
	if err != nil || idx == nil || len(im.Manifests) != 1 {
		t.Fatalf("index: %v, %v", im, err)
	}
	if n := c.Requests() - before; n != 0 {
		t.Errorf("ReadIndex sent %d requests, want none", n)
	}
	child := repo.Digest(im.Manifests[0].Digest.String())
	img, err := c.Get(ctx, child)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadIndex(child, img); !errors.Is(err, ErrNotAnIndex) || !strings.HasPrefix(err.Error(), child.String()) {
		t.Errorf("image: %v, want ErrNotAnIndex naming %s", err, child)
	}
}
