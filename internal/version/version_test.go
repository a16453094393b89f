package version

import (
	"reflect"
	"runtime/debug"
	"slices"
	"testing"
)

// TestStampLDFlagsNamesThisPackage checks that the -X flags name this
// package's variables: the linker ignores an -X for a package or variable
// that does not exist, so a wrong path would silently leave a release
// unstamped.
func TestStampLDFlagsNamesThisPackage(t *testing.T) {
	if got := reflect.TypeFor[Info]().PkgPath(); got != Package {
		t.Fatalf("Package = %q, but this package is %q", Package, got)
	}
	got := StampLDFlags("v1.2.3", "abc", "2026-12-01T20:00:00Z")
	want := "-s -w -X '" + Package + ".stampedVersion=v1.2.3' -X '" + Package + ".stampedRevision=abc' -X '" + Package + ".stampedTime=2026-12-01T20:00:00Z'"
	if got != want {
		t.Errorf("StampLDFlags:\n got %s\nwant %s", got, want)
	}
}

// TestFromBuildInfo checks what is read from the build information: the
// VCS settings, and the three dependencies in order, replacements' versions
// for replaced ones and "" for missing ones.
func TestFromBuildInfo(t *testing.T) {
	bi := &debug.BuildInfo{
		GoVersion: "go1.26.0",
		Main:      debug.Module{Path: "github.com/imgctl/imgctl", Version: "v0.3.0"},
		Deps: []*debug.Module{
			{Path: "github.com/sigstore/cosign/v2", Version: "v2.5.0", Replace: &debug.Module{Path: "example.com/cosign", Version: "v2.5.1"}},
			{Path: "github.com/moby/buildkit", Version: "v0.34.2"},
		},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.time", Value: "2026-12-01T20:00:00Z"}, {Key: "vcs.modified", Value: "true"}},
	}
	got := fromBuildInfo(bi)
	want := Info{Version: "v0.3.0", Revision: "abc", Time: "2026-12-01T20:00:00Z", Modified: true, Go: "go1.26.0",
		Dependencies: []Module{{"github.com/moby/buildkit", "v0.34.2"}, {"github.com/google/go-containerregistry", ""}, {"github.com/sigstore/cosign/v2", "v2.5.1"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("fromBuildInfo:\n got %+v\nwant %+v", got, want)
	}
	if empty := fromBuildInfo(&debug.BuildInfo{}); empty.Dependencies == nil || len(empty.Dependencies) != 3 {
		t.Errorf("no build settings: dependencies %#v, want the three, never null in JSON", empty.Dependencies)
	}
}

// TestApplyStamp checks that a stamped value wins and an empty one leaves
// the recorded value.
func TestApplyStamp(t *testing.T) {
	v := Info{Version: "(devel)", Revision: "rec", Time: "t0", Modified: true}
	applyStamp(&v, "v1.0.0", "", "t1")
	if v.Version != "v1.0.0" || v.Revision != "rec" || v.Time != "t1" || !v.Modified {
		t.Errorf("after the stamp: %+v", v)
	}
}

// TestRead reads this test binary's build information: unstamped, so the
// main module's version, and the three dependencies in order.
func TestRead(t *testing.T) {
	v, err := Read()
	if err != nil {
		t.Fatal(err)
	}
	if v.Version == "" || v.Go == "" {
		t.Errorf("Read: %+v", v)
	}
	var paths []string
	for _, d := range v.Dependencies {
		paths = append(paths, d.Path)
	}
	if !slices.Equal(paths, dependencies) {
		t.Errorf("dependencies %v, want %v", paths, dependencies)
	}
}
