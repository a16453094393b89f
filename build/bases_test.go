package build

import (
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/moby/buildkit/exporter/containerimage/exptypes"
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
