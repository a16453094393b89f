package build

import (
	"maps"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// TestPins: each resolved final base becomes a named context whose key is
// the FROM name as BuildKit's dockerui normalises it (familiar form,
// without :latest) and whose value pins the digest read; scratch and a
// FROM by digest are left alone.
func TestPins(t *testing.T) {
	h := func(c string) v1.Hash {
		return v1.Hash{Algorithm: "sha256", Hex: c + "000000000000000000000000000000000000000000000000000000000000000"}
	}
	linux := v1.Platform{OS: "linux", Architecture: "amd64"}
	fbs := []FinalBase{
		{Platform: linux, StagePlatform: linux, Name: "127.0.0.1:5000/distroless/static:nonroot"},
		{Platform: linux, StagePlatform: linux, Name: "golang"},
		{Platform: linux, StagePlatform: linux, Name: "docker.io/library/alpine:3.20"},
		{Platform: linux, StagePlatform: linux, Name: "mcr.microsoft.com/windows/nanoserver@sha256:" + h("d").Hex},
		{Platform: linux, StagePlatform: linux, Name: ""},
	}
	p := &Plan{Bases: [][]FinalBase{fbs}, resolved: map[string]ResolvedBase{}}
	for i, fb := range fbs {
		p.resolved[resolvedKey(fb)] = ResolvedBase{Name: fb.Name, top: h(string(rune('a' + i)))}
	}
	want := map[string]string{
		"context:127.0.0.1:5000/distroless/static:nonroot": "docker-image://127.0.0.1:5000/distroless/static@" + h("a").String(),
		"context:golang":      "docker-image://docker.io/library/golang@" + h("b").String(),
		"context:alpine:3.20": "docker-image://docker.io/library/alpine@" + h("c").String(),
	}
	if got := p.pins(0); !maps.Equal(got, want) {
		t.Errorf("pins:\n got %v\nwant %v", got, want)
	}
}

// TestTagsDirectly: only one solve of several platforms, none Windows, is
// tagged by BuildKit; a single platform (a manifest, not an index) and
// anything with Windows (os.version on the descriptor) are merged.
func TestTagsDirectly(t *testing.T) {
	la := v1.Platform{OS: "linux", Architecture: "amd64"}
	lb := v1.Platform{OS: "linux", Architecture: "arm64"}
	w := v1.Platform{OS: "windows", Architecture: "amd64"}
	for _, c := range []struct {
		variants [][]v1.Platform
		want     bool
	}{
		{[][]v1.Platform{{la, lb}}, true},
		{[][]v1.Platform{{la}}, false},
		{[][]v1.Platform{{la, w}}, false},
		{[][]v1.Platform{{la, lb}, {w}}, false},
	} {
		p := &Plan{}
		for _, ps := range c.variants {
			p.Variants = append(p.Variants, Variant{Platforms: ps})
		}
		if got := p.tagsDirectly(); got != c.want {
			t.Errorf("%v: %t, want %t", c.variants, got, c.want)
		}
	}
}
