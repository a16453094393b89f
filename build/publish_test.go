package build

import (
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

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
