package regtest

import (
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// blobSizes returns the compressed sizes of img's distributable layers and
// of its config.
func blobSizes(t *testing.T, img v1.Image) (layers, config int64) {
	t.Helper()
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range m.Layers {
		if l.MediaType.IsDistributable() {
			layers += l.Size
		}
	}
	return layers, m.Config.Size
}

func digestOf(t *testing.T, x interface{ Digest() (v1.Hash, error) }) v1.Hash {
	t.Helper()
	d, err := x.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}
