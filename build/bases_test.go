package build

import (
	"context"
	"errors"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/imgctl/imgctl/internal/regtest"
	"github.com/imgctl/imgctl/registry"
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

// TestPickBase: the child of the wanted platform from a base index (for
// Windows with an os.version, the same build; revision ignored), the image
// itself for a single image (its os.version is checked after the solve),
// and ErrBaseNotFound when the index has no such child.
func TestPickBase(t *testing.T) {
	ctx := context.Background()
	reg := regtest.New(t)
	idx := regtest.Must(regtest.MultiOSIndex())(t)
	ref := reg.MustRef(t, "base:multi")
	regtest.MustPush(t, ref, idx)
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	rc := registry.New()
	desc, err := rc.Get(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		p    v1.Platform
		want int
	}{
		{v1.Platform{OS: "linux", Architecture: "arm64"}, 1},
		{v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.20348"}, 3},
		{v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.26100.1"}, 2},
	} {
		rb, err := pickBase(desc, ref, tc.p)
		if err != nil {
			t.Fatal(err)
		}
		if d := im.Manifests[tc.want].Digest; rb.Digest != d || rb.Name != ref.Name() || rb.top != desc.Digest {
			t.Errorf("%v: got %+v, want %s", tc.p, rb, d)
		}
	}
	if _, err := pickBase(desc, ref, v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.17763"}); !errors.Is(err, ErrBaseNotFound) {
		t.Errorf("ltsc2019: %v, want ErrBaseNotFound", err)
	}
	single := reg.MustRef(t, "nano:ltsc2022")
	d := regtest.MustPush(t, single, regtest.Must(regtest.WindowsBaseImage(regtest.OSVersionLTSC2022))(t))
	sdesc, err := rc.Get(ctx, single)
	if err != nil {
		t.Fatal(err)
	}
	if rb, err := pickBase(sdesc, single, windowsAMD64); err != nil || rb.Digest != d || rb.OSVersion != "" {
		t.Errorf("single image: %+v %v, want %s with os.version left for after the solve", rb, err, d)
	}
}
