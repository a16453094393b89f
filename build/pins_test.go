package build

import (
	"maps"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/build/variant"
	"github.com/imgctl/imgctl/lint"
	"github.com/imgctl/imgctl/platform"
)

// TestPins: each resolved final base becomes two named contexts, keyed by
// the FROM name as BuildKit's dockerui normalises it (familiar form,
// without :latest): with the platform the frontend resolves the stage for
// (arm64 without v8; a Windows stage on the target platform with the
// base's full os.version, which the solve asks for; a FROM --platform
// stage with its own platform) pinning what imgctl resolved, and without a
// platform pinning what the tag pointed at. Scratch and a FROM by digest
// are left alone.
func TestPins(t *testing.T) {
	h := func(c string) v1.Hash {
		return v1.Hash{Algorithm: "sha256", Hex: (c + strings.Repeat("0", 64))[:64]}
	}
	amd := v1.Platform{OS: "linux", Architecture: "amd64"}
	arm := v1.Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}
	win := v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.20348"}
	full := v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.20348.1234"}
	fbs := []lint.FinalBase{
		{Platform: amd, StagePlatform: amd, Name: "127.0.0.1:5000/distroless/static:nonroot"},
		{Platform: arm, StagePlatform: arm, Name: "golang"},
		{Platform: win, StagePlatform: win, Name: "mcr.microsoft.com/windows/nanoserver:ltsc2022"},
		{Platform: win, StagePlatform: windowsAMD64, Name: "reg.example/explicit:1"},
		{Platform: amd, StagePlatform: amd, Name: "mcr.microsoft.com/windows/nanoserver@sha256:" + h("d").Hex},
		{Platform: amd, StagePlatform: amd, Name: ""},
	}
	plats := []v1.Platform{amd, platform.Normalize(arm), full, windowsAMD64, amd, amd}
	p := &Plan{Bases: [][]lint.FinalBase{fbs}, resolved: map[string]ResolvedBase{}}
	for i, fb := range fbs {
		c := string(rune('a' + i))
		p.resolved[resolvedKey(0, fb)] = ResolvedBase{Name: fb.Name, Digest: h(c), top: h(c + "1"), plat: plats[i]}
	}
	want := map[string]string{
		"context:127.0.0.1:5000/distroless/static:nonroot::linux/amd64": "docker-image://127.0.0.1:5000/distroless/static@" + h("a").String(),
		"context:127.0.0.1:5000/distroless/static:nonroot":              "docker-image://127.0.0.1:5000/distroless/static@" + h("a1").String(),
		"context:golang::linux/arm64":                                   "docker-image://docker.io/library/golang@" + h("b").String(),
		"context:golang":                                                "docker-image://docker.io/library/golang@" + h("b1").String(),
		"context:mcr.microsoft.com/windows/nanoserver:ltsc2022::windows(10.0.20348.1234)/amd64": "docker-image://mcr.microsoft.com/windows/nanoserver@" + h("c").String(),
		"context:mcr.microsoft.com/windows/nanoserver:ltsc2022":                                 "docker-image://mcr.microsoft.com/windows/nanoserver@" + h("c1").String(),
		"context:reg.example/explicit:1::windows/amd64":                                         "docker-image://reg.example/explicit@" + h("d").String(),
		"context:reg.example/explicit:1":                                                        "docker-image://reg.example/explicit@" + h("d1").String(),
	}
	if got := p.pins(0); !maps.Equal(got, want) {
		t.Errorf("pins:\n got %v\nwant %v", got, want)
	}
}

// TestSolvePlatforms: a Windows platform whose final stage builds FROM a
// base on the target platform asks for the base's os.version as the
// builder resolved it; a FROM --platform stage, a base config without
// os.version and FROM scratch ask for plain windows/amd64; Linux platforms
// are asked for as given. The plan's platforms stay as they were.
func TestSolvePlatforms(t *testing.T) {
	win := variant.WindowsPlatform(platform.Releases[1])
	arm := v1.Platform{OS: "linux", Architecture: "arm64"}
	full := win
	full.OSVersion = "10.0.20348.1234"
	for _, tc := range []struct {
		name string
		fb   lint.FinalBase
		rb   ResolvedBase
		want string
	}{
		{"on target", lint.FinalBase{Platform: win, StagePlatform: win, Name: "n:1"}, ResolvedBase{plat: full}, "windows(10.0.20348.1234)/amd64,linux/arm64"},
		{"base without os.version", lint.FinalBase{Platform: win, StagePlatform: win, Name: "n:1"}, ResolvedBase{plat: windowsAMD64}, "windows/amd64,linux/arm64"},
		{"FROM --platform", lint.FinalBase{Platform: win, StagePlatform: windowsAMD64, Name: "n:1"}, ResolvedBase{plat: windowsAMD64}, "windows/amd64,linux/arm64"},
		{"scratch", lint.FinalBase{Platform: win, StagePlatform: win}, ResolvedBase{}, "windows/amd64,linux/arm64"},
	} {
		p := &Plan{
			Variants: []variant.Variant{{Platforms: []v1.Platform{win, arm}}},
			Bases:    [][]lint.FinalBase{{tc.fb}},
			resolved: map[string]ResolvedBase{resolvedKey(0, tc.fb): tc.rb},
		}
		if got := formatPlatforms(p.solvePlatforms(0)); got != tc.want {
			t.Errorf("%s: solve platforms = %q, want %q", tc.name, got, tc.want)
		}
		if p.Variants[0].Platforms[0].OSVersion != win.OSVersion {
			t.Errorf("%s: solvePlatforms changed the plan", tc.name)
		}
	}
}
