package index

import (
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// TestCreateDockerMediaTypes: only Docker schema2 children and no
// annotations give a Docker manifest list; child media types are kept.
func TestCreateDockerMediaTypes(t *testing.T) {
	reg := regtest.New(t)
	srcs := []name.Reference{
		pushed(t, reg, "src:l", regtest.Must(regtest.LinuxImage("amd64", regtest.WithDockerMediaTypes()))(t)),
		pushed(t, reg, "src:w", regtest.Must(regtest.ForeignLayerImage(regtest.OSVersionLTSC2022))(t)),
	}
	res, err := Create(ctx, tag(t, reg, "app:1"), srcs, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if res.Manifest.MediaType != types.DockerManifestList || res.Manifest.Manifests[1].MediaType != types.DockerManifestSchema2 {
		t.Errorf("media types: %s, child %s", res.Manifest.MediaType, res.Manifest.Manifests[1].MediaType)
	}
	o := testOptions()
	o.Annotations = map[string]string{"org.opencontainers.image.source": "https://example.com"}
	if res, err = Create(ctx, tag(t, reg, "app:2"), srcs, o); err != nil || res.Manifest.MediaType != types.OCIImageIndex {
		t.Errorf("annotated index: %v %v", err, res)
	}
}

// TestCreateNestedIndex copies a child that is itself an index.
func TestCreateNestedIndex(t *testing.T) {
	reg := regtest.New(t)
	inner := regtest.Must(regtest.Index(regtest.Entry{Image: regtest.Must(regtest.LinuxImage("riscv64"))(t)}))(t)
	outer := regtest.Must(regtest.Index(regtest.Entry{Index: inner}))(t)
	srcs := []name.Reference{
		pushed(t, reg, "src:outer", outer),
		pushed(t, reg, "src:l", regtest.Must(regtest.LinuxImage("amd64"))(t)),
	}
	target := tag(t, reg, "app:1")
	if _, err := Create(ctx, target, srcs, testOptions()); err != nil {
		t.Fatal(err)
	}
	im, _ := fetchIndex(t, target)
	if len(im.Manifests) != 2 || im.Manifests[1].MediaType != types.OCIImageIndex || im.Manifests[1].Digest != digest(t, inner) {
		t.Errorf("platforms %v", platforms(im))
	}
	if _, err := fetchIndexErr(target.Context().Digest(digest(t, inner).String())); err != nil {
		t.Error(err)
	}
}
