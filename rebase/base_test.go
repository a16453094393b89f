package rebase

import (
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/imgctl/imgctl/platform"
)

// TestPick pins how a base child is chosen for a variant: the same build
// (platform.SameBuild), a child without os.version first for a HostProcess
// variant, else the newest child, where a child without a readable
// os.version is never newer than another.
func TestPick(t *testing.T) {
	child := func(os, osVersion string) v1.Descriptor {
		p := platform.Platform{OS: os, Architecture: "amd64", OSVersion: osVersion}
		return v1.Descriptor{MediaType: types.OCIManifestSchema1, Platform: &p, Digest: v1.Hash{Algorithm: "sha256", Hex: os + ":" + osVersion}}
	}
	base := []v1.Descriptor{
		child("linux", ""),
		child("windows", "10.0.20348.3091"),
		child("windows", "10.0.26100.9999"),
		child("windows", "10.0.26100.33674"),
		child("windows", ""),
	}
	unreadable := []v1.Descriptor{child("windows", "junk"), child("windows", "")}
	for _, tc := range []struct {
		variant platform.Platform
		base    []v1.Descriptor
		pick    string // "" for none
		change  bool
	}{
		{win("10.0.20348.1"), base, "windows:10.0.20348.3091", false},
		{win("10.0.26100.1"), base, "windows:10.0.26100.9999", false}, // the first of the build
		{win("10.0.17763.1"), base, "windows:10.0.26100.33674", true},
		{win(""), base, "windows:", false},
		{win(""), base[:4], "windows:10.0.26100.33674", false}, // no build to keep: the newest
		{win("junk"), append([]v1.Descriptor{child("windows", "10.0.20348.1")}, unreadable...), "windows:junk", false},
		{win("10.0.17763.1"), append(unreadable, child("windows", "10.0.20348.1")), "windows:10.0.20348.1", true},
		{win("10.0.17763.1"), unreadable, "windows:junk", true},
		{platform.Platform{OS: "linux", Architecture: "amd64"}, base, "linux:", false},
		{platform.Platform{OS: "linux", Architecture: "arm64"}, base, "", false},
	} {
		d, change, ok := pick(tc.base, tc.variant)
		got := ""
		if ok {
			got = d.Digest.Hex
		}
		if got != tc.pick || change != tc.change {
			t.Errorf("pick for %s = %q (change %v), want %q (change %v)", platform.Format(tc.variant), got, change, tc.pick, tc.change)
		}
	}
}

func win(osVersion string) platform.Platform {
	return platform.Platform{OS: "windows", Architecture: "amd64", OSVersion: osVersion}
}
