package build

import (
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/moby/buildkit/client"

	"github.com/imgctl/imgctl/build/variant"
	"github.com/imgctl/imgctl/registry"
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

// TestExportAttrsConcurrent: the solves of one build run concurrently and
// each reads o's registry client for its exporter attributes; under -race
// this caught registry() writing o.Registry on every call.
func TestExportAttrsConcurrent(t *testing.T) {
	tag, err := name.NewTag("127.0.0.1:5000/app:1")
	if err != nil {
		t.Fatal(err)
	}
	o := &Options{Tag: tag, Registry: registry.New()}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if attrs := exportAttrs(o, variant.Variant{}, nil, false); attrs["name"] != "127.0.0.1:5000/app" {
				t.Errorf("name = %q", attrs["name"])
			}
		})
	}
	wg.Wait()
}
