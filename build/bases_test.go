package build

import (
	"encoding/json"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/moby/buildkit/exporter/containerimage/exptypes"

	"github.com/imgctl/imgctl/build/content"
	"github.com/imgctl/imgctl/internal/testing/regtest"
)

var (
	linuxAMD64   = v1.Platform{OS: "linux", Architecture: "amd64"}
	windowsAMD64 = v1.Platform{OS: "windows", Architecture: "amd64"}
)

func TestBaseAnnotationAttrs(t *testing.T) {
	d1, d2 := v1.Hash{Algorithm: "sha256", Hex: "11"}, v1.Hash{Algorithm: "sha256", Hex: "22"}
	arm := v1.Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}
	bases := map[string]ResolvedBase{
		"linux/amd64": {Name: "reg/d:1", Digest: d1},
		"linux/arm64": {Name: "reg/d:1", Digest: d2},
	}
	got := BaseAnnotationAttrs([]v1.Platform{linuxAMD64, arm, windowsAMD64}, bases)
	want := map[string]string{
		"annotation-manifest[linux/amd64].org.opencontainers.image.base.name":   "reg/d:1",
		"annotation-manifest[linux/amd64].org.opencontainers.image.base.digest": d1.String(),
		"annotation-manifest[linux/arm64].org.opencontainers.image.base.name":   "reg/d:1",
		"annotation-manifest[linux/arm64].org.opencontainers.image.base.digest": d2.String(),
	}
	if len(got) != len(want) {
		t.Fatalf("attrs = %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q (all: %v)", k, got[k], v, got)
		}
		// BuildKit's exporter must read the key back as a manifest annotation.
		if ak, ok, err := exptypes.ParseAnnotationKey(k); !ok || err != nil || ak.Type != exptypes.AnnotationManifest {
			t.Errorf("BuildKit does not parse %q: %+v %v", k, ak, err)
		}
	}
	win := v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.20348"}
	one := BaseAnnotationAttrs([]v1.Platform{win}, map[string]ResolvedBase{"windows/amd64@20348": {Name: "reg/n:2022", Digest: d1}})
	if one["annotation-manifest.org.opencontainers.image.base.digest"] != d1.String() || len(one) != 2 {
		t.Errorf("single platform attrs = %v", one)
	}
}

// TestChildOf: content.ChildOf, the child of the wanted platform from a base index
// (for Windows with an os.version, the same build, revision ignored; the
// first in index order, attestations skipped), also from a Docker manifest
// list; no child for an image or for a build the index lacks.
func TestChildOf(t *testing.T) {
	idx := regtest.Must(regtest.MultiOSIndex())(t)
	raw := regtest.Must(idx.RawManifest())(t)
	im := regtest.Must(idx.IndexManifest())(t)
	for _, tc := range []struct {
		p    v1.Platform
		want int
	}{
		{v1.Platform{OS: "linux", Architecture: "arm64"}, 1},
		{v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.20348"}, 3},
		{v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.26100.1"}, 2},
		{windowsAMD64, 2},
	} {
		d, ok, err := content.ChildOf(raw, tc.p)
		if err != nil || !ok || d.Digest != im.Manifests[tc.want].Digest {
			t.Errorf("%v: got %s %t %v, want %s", tc.p, d.Digest, ok, err, im.Manifests[tc.want].Digest)
		}
	}
	if _, ok, err := content.ChildOf(raw, v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.17763"}); ok || err != nil {
		t.Errorf("ltsc2019: %t %v, want no child and no error", ok, err)
	}
	list := regtest.Must(json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": types.DockerManifestList, "manifests": im.Manifests}))(t)
	if d, ok, err := content.ChildOf(list, v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.20348"}); !ok || err != nil || d.Digest != im.Manifests[3].Digest {
		t.Errorf("Docker manifest list: %s %t %v", d.Digest, ok, err)
	}
	img := regtest.Must(regtest.WindowsBaseImage(regtest.OSVersionLTSC2022))(t)
	if _, ok, err := content.ChildOf(regtest.Must(img.RawManifest())(t), windowsAMD64); ok || err != nil {
		t.Errorf("an image: %t %v, want no child and no error", ok, err)
	}
	if _, _, err := content.ChildOf([]byte("{"), windowsAMD64); err == nil {
		t.Error("unreadable manifest: no error")
	}
}
