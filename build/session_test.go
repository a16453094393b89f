package build

import (
	"testing"

	"github.com/moby/buildkit/client"
)

func TestCacheForVariant(t *testing.T) {
	in := []client.CacheOptionsEntry{
		{Type: "registry", Attrs: map[string]string{"ref": "reg:5000/app:cache", "mode": "max"}},
		{Type: "registry", Attrs: map[string]string{"ref": "reg:5000/app"}},
		{Type: "registry", Attrs: map[string]string{"ref": "reg/app@sha256:abc"}},
		{Type: "local", Attrs: map[string]string{"dest": "/c"}},
	}
	got := cacheForVariant(in, "ltsc2022", true)
	for i, want := range []string{"reg:5000/app:cache-ltsc2022", "reg:5000/app:ltsc2022", "reg/app@sha256:abc", ""} {
		if got[i].Attrs["ref"] != want {
			t.Errorf("entry %d ref = %q, want %q", i, got[i].Attrs["ref"], want)
		}
	}
	if in[0].Attrs["ref"] != "reg:5000/app:cache" {
		t.Error("cacheForVariant changed its input")
	}
	if one := cacheForVariant(in, "linux", false); one[0].Attrs["ref"] != "reg:5000/app:cache" {
		t.Errorf("single variant ref = %q", one[0].Attrs["ref"])
	}
}
