package build

import (
	"maps"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/imgctl/imgctl/lint"
)

// TestPins: each resolved final base becomes two named contexts, keyed
// by the FROM name as BuildKit's dockerui normalises it (familiar form,
// without :latest): with the stage's platform (no os.version, arm64
// without v8) pinning the platform's manifest, and without a platform
// pinning what the tag pointed at. Scratch and a FROM by digest are left
// alone.
func TestPins(t *testing.T) {
	h := func(c string) v1.Hash {
		return v1.Hash{Algorithm: "sha256", Hex: (c + strings.Repeat("0", 64))[:64]}
	}
	amd := v1.Platform{OS: "linux", Architecture: "amd64"}
	arm := v1.Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}
	win := v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.20348"}
	fbs := []lint.FinalBase{
		{Platform: amd, StagePlatform: amd, Name: "127.0.0.1:5000/distroless/static:nonroot"},
		{Platform: arm, StagePlatform: arm, Name: "golang"},
		{Platform: win, StagePlatform: win, Name: "mcr.microsoft.com/windows/nanoserver:ltsc2022"},
		{Platform: amd, StagePlatform: amd, Name: "mcr.microsoft.com/windows/nanoserver@sha256:" + h("d").Hex},
		{Platform: amd, StagePlatform: amd, Name: ""},
	}
	p := &Plan{Bases: [][]lint.FinalBase{fbs}, resolved: map[string]ResolvedBase{}}
	for i, fb := range fbs {
		c := string(rune('a' + i))
		p.resolved[resolvedKey(fb)] = ResolvedBase{Name: fb.Name, Digest: h(c), top: h(c + "1")}
	}
	want := map[string]string{
		"context:127.0.0.1:5000/distroless/static:nonroot::linux/amd64":        "docker-image://127.0.0.1:5000/distroless/static@" + h("a").String(),
		"context:127.0.0.1:5000/distroless/static:nonroot":                     "docker-image://127.0.0.1:5000/distroless/static@" + h("a1").String(),
		"context:golang::linux/arm64":                                          "docker-image://docker.io/library/golang@" + h("b").String(),
		"context:golang":                                                       "docker-image://docker.io/library/golang@" + h("b1").String(),
		"context:mcr.microsoft.com/windows/nanoserver:ltsc2022::windows/amd64": "docker-image://mcr.microsoft.com/windows/nanoserver@" + h("c").String(),
		"context:mcr.microsoft.com/windows/nanoserver:ltsc2022":                "docker-image://mcr.microsoft.com/windows/nanoserver@" + h("c1").String(),
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
