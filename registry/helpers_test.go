package registry

import (
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// pushedIndex pushes a one-image index by digest into repo (children
// included) and returns it as Publish takes it, with its digest.
func pushedIndex(t *testing.T, repo name.Repository, seed string) (RawManifest, v1.Hash) {
	t.Helper()
	idx := regtest.Must(regtest.Index(regtest.Entry{Image: regtest.Must(regtest.LinuxImage("amd64", regtest.WithSeed(seed)))(t)}))(t)
	d := regtest.Must(idx.Digest())(t)
	regtest.MustPush(t, repo.Digest(d.String()), idx)
	return RawManifest{Raw: regtest.Must(idx.RawManifest())(t), Type: regtest.Must(idx.MediaType())(t)}, d
}
