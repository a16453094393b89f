package lint

import (
	"errors"
	"os"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

func TestFinalBases(t *testing.T) {
	hello, err := os.ReadFile("../examples/hello/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	win := v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.26100"}
	for _, tc := range []struct {
		name, dockerfile string
		opts             Options
		want             []string // base name per platform
		stage            string   // stage of the last platform's base
	}{
		{"hello defaults", string(hello), Options{Platforms: []v1.Platform{linuxAMD64, win}},
			[]string{"gcr.io/distroless/static-debian12:nonroot", "mcr.microsoft.com/windows/nanoserver:ltsc2022"}, "final-windows"},
		{"hello with build args", string(hello), Options{Platforms: []v1.Platform{linuxARM64, win},
			BuildArgs: map[string]string{"LINUX_BASE": "reg/distroless:1", "WINDOWS_BASE": "reg/nano:ltsc2025"}},
			[]string{"reg/distroless:1", "reg/nano:ltsc2025"}, "final-windows"},
		{"stage chain", "FROM alpine:3 AS a\nFROM a AS b\nRUN true\nFROM b\n", Options{}, []string{"alpine:3"}, "a"},
		{"scratch", "FROM golang AS build\nFROM scratch\nCOPY --from=build /x /x\n", Options{}, []string{""}, "stage-1"},
		{"target", "FROM alpine AS a\nFROM busybox AS b\n", Options{Target: "a"}, []string{"alpine"}, "a"},
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
	if _, err := FinalBases([]byte("FROM alpine AS a\n"), "Dockerfile", Options{Target: "x"}); !errors.Is(err, ErrTargetNotFound) {
		t.Errorf("unknown target: %v", err)
	}
}

func TestFinalBasesStagePlatform(t *testing.T) {
	fbs, err := FinalBases([]byte("FROM --platform=linux/arm64 alpine\n"), "Dockerfile", Options{Platforms: []v1.Platform{linuxAMD64}})
	if err != nil {
		t.Fatal(err)
	}
	if got := fbs[0].StagePlatform; got.Architecture != "arm64" || fbs[0].Platform.Architecture != "amd64" {
		t.Errorf("stage platform = %+v", got)
	}
}
