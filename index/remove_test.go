package index

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/registry"
)

func TestRemove(t *testing.T) {
	reg := regtest.New(t)
	src := pushed(t, reg, "app:1", regtest.Must(regtest.MultiOSIndex())(t))
	p := regtest.Must(platform.Parse("windows/amd64:10.0.20348"))(t)
	o := testOptions()
	o.Annotations = map[string]string{"org.opencontainers.image.version": "1.1"}
	reg.ResetStats()
	res, err := Remove(ctx, tag(t, reg, "app:1-no2022"), src, []platform.Platform{p}, o)
	if err != nil {
		t.Fatal(err)
	}
	if st := reg.Stats(); st.Put != 1 {
		t.Errorf("remove in the same repository: %s", st)
	}
	im, _ := fetchIndex(t, tag(t, reg, "app:1-no2022"))
	want := []string{"linux/amd64", "linux/arm64/v8", "windows/amd64:" + regtest.OSVersionLTSC2025, "attestation", "attestation", "attestation"}
	if got := platforms(im); !slices.Equal(got, want) {
		t.Errorf("platforms %v, want %v", got, want)
	}
	if im.Annotations["org.opencontainers.image.version"] != "1.1" {
		t.Errorf("annotations %v", im.Annotations)
	}
	if len(res.Notes) != 2 || !strings.Contains(res.Notes[0], "removed windows/amd64:"+regtest.OSVersionLTSC2022) ||
		!strings.Contains(res.Notes[1], "attestation") {
		t.Errorf("notes %q", res.Notes)
	}
	// Without a version every windows/amd64 variant goes.
	all := regtest.Must(platform.Parse("windows/amd64"))(t)
	o.DryRun = true
	if res, err = Remove(ctx, tag(t, reg, "app:linux"), src, []platform.Platform{all}, o); err != nil || len(res.Manifest.Manifests) != 4 {
		t.Errorf("remove windows/amd64: %v", err)
	}
	none := regtest.Must(platform.Parse("windows/amd64:10.0.17763"))(t)
	if _, err := Remove(ctx, tag(t, reg, "app:x"), src, []platform.Platform{none}, o); !errors.Is(err, ErrNoMatch) {
		t.Errorf("got %v, want ErrNoMatch", err)
	}
	if _, err := Remove(ctx, tag(t, reg, "app:1"), src, []platform.Platform{p}, testOptions()); !errors.Is(err, registry.ErrTagExists) {
		t.Errorf("got %v, want ErrTagExists", err)
	}
}
