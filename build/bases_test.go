package build

import (
	"context"
	"errors"
	"os"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/moby/buildkit/exporter/containerimage/exptypes"

	"github.com/imgctl/imgctl/internal/regtest"
)

func TestFinalBases(t *testing.T) {
	hello, err := os.ReadFile("../examples/hello/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	win := v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.26100"}
	for _, tc := range []struct {
		name, dockerfile string
		opts             PreflightOptions
		want             []string // base name per platform
		stage            string   // stage of the last platform's base
	}{
		{"hello defaults", string(hello), PreflightOptions{Platforms: []v1.Platform{linuxAMD64, win}},
			[]string{"gcr.io/distroless/static-debian12:nonroot", "mcr.microsoft.com/windows/nanoserver:ltsc2022"}, "final-windows"},
		{"hello with build args", string(hello), PreflightOptions{Platforms: []v1.Platform{linuxARM64, win},
			BuildArgs: map[string]string{"LINUX_BASE": "reg/distroless:1", "WINDOWS_BASE": "reg/nano:ltsc2025"}},
			[]string{"reg/distroless:1", "reg/nano:ltsc2025"}, "final-windows"},
		{"stage chain", "FROM alpine:3 AS a\nFROM a AS b\nRUN true\nFROM b\n", PreflightOptions{}, []string{"alpine:3"}, "a"},
		{"scratch", "FROM golang AS build\nFROM scratch\nCOPY --from=build /x /x\n", PreflightOptions{}, []string{""}, "stage-1"},
		{"target", "FROM alpine AS a\nFROM busybox AS b\n", PreflightOptions{Target: "a"}, []string{"alpine"}, "a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fbs, err := FinalBases([]byte(tc.dockerfile), "Dockerfile", tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(fbs) != len(tc.want) {
				t.Fatalf("got %d bases, want %d", len(fbs), len(tc.want))
			}
			for i, fb := range fbs {
				if fb.Name != tc.want[i] {
					t.Errorf("base %d = %q, want %q", i, fb.Name, tc.want[i])
				}
			}
			if last := fbs[len(fbs)-1]; last.Stage != tc.stage || last.Line == 0 {
				t.Errorf("stage = %q line %d, want %q", last.Stage, last.Line, tc.stage)
			}
		})
	}
	if _, err := FinalBases([]byte("FROM alpine AS a\n"), "Dockerfile", PreflightOptions{Target: "x"}); !errors.Is(err, ErrTargetNotFound) {
		t.Errorf("unknown target: %v", err)
	}
}

func TestFinalBasesStagePlatform(t *testing.T) {
	fbs, err := FinalBases([]byte("FROM --platform=linux/arm64 alpine\n"), "Dockerfile", PreflightOptions{Platforms: []v1.Platform{linuxAMD64}})
	if err != nil {
		t.Fatal(err)
	}
	if got := fbs[0].StagePlatform; got.Architecture != "arm64" || fbs[0].Platform.Architecture != "amd64" {
		t.Errorf("stage platform = %+v", got)
	}
}

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

func TestResolveBase(t *testing.T) {
	reg := regtest.New(t)
	idx, err := regtest.MultiOSIndex()
	if err != nil {
		t.Fatal(err)
	}
	ref := reg.MustRef(t, "base:multi")
	regtest.MustPush(t, ref, idx)
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		p    v1.Platform
		want int
	}{
		{linuxARM64, 1},
		{v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.20348"}, 3},
		{v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.26100.1"}, 2},
	} {
		rb, err := ResolveBase(ctx, ref, tc.p)
		if err != nil {
			t.Fatal(err)
		}
		if d := im.Manifests[tc.want].Digest; rb.Digest != d || rb.Name != ref.Name() {
			t.Errorf("%v: got %+v, want %s", tc.p, rb, d)
		}
	}
	if _, err := ResolveBase(ctx, ref, v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.17763"}); !errors.Is(err, ErrBaseNotFound) {
		t.Errorf("ltsc2019: %v", err)
	}
	img, err := regtest.WindowsBaseImage(regtest.OSVersionLTSC2022)
	if err != nil {
		t.Fatal(err)
	}
	single := reg.MustRef(t, "nano:ltsc2022")
	d := regtest.MustPush(t, single, img)
	rb, err := ResolveBase(ctx, single, windowsAMD64)
	if err != nil || rb.Digest != d || rb.OSVersion != regtest.OSVersionLTSC2022 {
		t.Errorf("single image: %+v %v, want %s", rb, err, d)
	}
}
