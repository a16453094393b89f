package platform

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/containerd/containerd/v2/core/images"
	"github.com/containerd/platforms"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/opencontainers/go-digest"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"
)

// child is an image descriptor of platform os/arch[/variant] and
// os.version, with a digest named after i.
func child(i int, os, arch, variant, osVersion string) v1.Descriptor {
	return v1.Descriptor{MediaType: types.OCIManifestSchema1, Size: 1,
		Digest:   v1.Hash{Algorithm: "sha256", Hex: strconv.Itoa(1000 + i)},
		Platform: &v1.Platform{OS: os, Architecture: arch, Variant: variant, OSVersion: osVersion}}
}

func TestBaseChild(t *testing.T) {
	att := child(9, "unknown", "unknown", "", "")
	att.Annotations = map[string]string{"vnd.docker.reference.type": "attestation-manifest"}
	nested := child(8, "windows", "amd64", "", "10.0.26100.1")
	nested.MediaType = types.OCIImageIndex
	w22a, w22b := child(1, "windows", "amd64", "", "10.0.20348.100"), child(2, "windows", "amd64", "", "10.0.20348.200")
	w25 := child(3, "windows", "amd64", "", "10.0.26100.300")
	hp := child(4, "windows", "amd64", "", "")
	amd, arm := child(5, "linux", "amd64", "", ""), child(6, "linux", "arm64", "v8", "")
	for _, tc := range []struct {
		name      string
		cands     []v1.Descriptor
		want      Platform
		pick      *v1.Descriptor
		sameBuild bool
	}{
		{"exact os.version first", []v1.Descriptor{w22a, w22b}, Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.20348.200"}, &w22b, true},
		{"else the first of the build", []v1.Descriptor{w25, w22a, w22b}, Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.20348.999"}, &w22a, true},
		{"a build alone", []v1.Descriptor{w25, w22b}, Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.20348"}, &w22b, true},
		{"else the newest of another build", []v1.Descriptor{w22a, w22b, att}, Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.26100.1"}, &w22b, false},
		{"HostProcess: a child without os.version", []v1.Descriptor{w25, hp}, Platform{OS: "windows", Architecture: "amd64"}, &hp, true},
		{"HostProcess: else the newest", []v1.Descriptor{w22a, w25}, Platform{OS: "windows", Architecture: "amd64"}, &w25, true},
		{"attestations and nested indexes never", []v1.Descriptor{att, nested}, Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.26100.1"}, nil, false},
		{"linux: the first of the architecture", []v1.Descriptor{att, arm, amd}, Platform{OS: "linux", Architecture: "amd64"}, &amd, true},
		{"arm64 is arm64/v8", []v1.Descriptor{amd, arm}, Platform{OS: "linux", Architecture: "arm64"}, &arm, true},
		{"no other architecture", []v1.Descriptor{arm}, Platform{OS: "linux", Architecture: "amd64"}, nil, false},
		{"mixed-case OS", []v1.Descriptor{child(7, "Windows", "amd64", "", "10.0.26100.5")}, Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.26100.1"}, ptr(child(7, "Windows", "amd64", "", "10.0.26100.5")), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, same, ok := BaseChild(tc.cands, tc.want)
			if ok != (tc.pick != nil) || (ok && (d.Digest != tc.pick.Digest || same != tc.sameBuild)) {
				t.Fatalf("BaseChild = %s (same build %t, ok %t), want %v (same build %t)", d.Digest, same, ok, tc.pick, tc.sameBuild)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestBaseChildIsBuildKitsLinuxChild: for Linux bases, BaseChild takes
// the child BuildKit resolves for the platform (containerd's
// images.LimitManifests over platforms.Only, as BuildKit's imageutil
// calls it) whenever the index has an image of that exact architecture,
// over random indexes of amd64, arm64, arm/v7, 386 and attestation
// entries in random order.
func TestBaseChildIsBuildKitsLinuxChild(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 24))
	pool := []v1.Descriptor{child(0, "linux", "amd64", "", ""), child(1, "linux", "arm64", "v8", ""), child(2, "linux", "arm64", "", ""),
		child(3, "linux", "arm", "v7", ""), child(4, "linux", "386", "", ""), child(5, "unknown", "unknown", "", ""), child(6, "linux", "amd64", "", "")}
	wants := []Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}, {OS: "linux", Architecture: "arm", Variant: "v7"}}
	compared := 0
	for range 300 {
		idx := sample(r, pool)
		for _, want := range wants {
			d, _, ok := BaseChild(idx, want)
			bk, err := buildkitChild(idx, want)
			if !ok {
				continue
			}
			compared++
			if err != nil || bk != d.Digest.String() {
				t.Fatalf("index %v, %s: BaseChild %s, BuildKit %s (%v)", platformsOf(idx), Format(want), d.Digest, bk, err)
			}
		}
	}
	if compared < 300 {
		t.Fatalf("only %d comparisons", compared)
	}
}

// buildkitChild is what BuildKit takes for want from an index: the
// children without a platform or matching platforms.Only, first in
// containerd's order.
func buildkitChild(idx []v1.Descriptor, want Platform) (string, error) {
	m := platforms.Only(platforms.Normalize(ocispecs.Platform{OS: want.OS, Architecture: want.Architecture, Variant: want.Variant}))
	var matching []ocispecs.Descriptor
	for _, d := range idx {
		p := ocispecs.Platform{OS: d.Platform.OS, Architecture: d.Platform.Architecture, Variant: d.Platform.Variant}
		if m.Match(p) {
			matching = append(matching, ocispecs.Descriptor{MediaType: string(d.MediaType), Digest: digest.Digest(d.Digest.String()), Size: 1, Platform: &p})
		}
	}
	list := images.HandlerFunc(func(context.Context, ocispecs.Descriptor) ([]ocispecs.Descriptor, error) { return matching, nil })
	picked, err := images.LimitManifests(list, m, 1)(context.Background(), ocispecs.Descriptor{MediaType: ocispecs.MediaTypeImageIndex})
	if err != nil || len(picked) == 0 {
		return "", err
	}
	return picked[0].Digest.String(), nil
}

// sample returns 1 to len(pool) entries of pool in random order.
func sample(r *rand.Rand, pool []v1.Descriptor) []v1.Descriptor {
	out := make([]v1.Descriptor, len(pool))
	copy(out, pool)
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out[:1+r.IntN(len(out))]
}

func platformsOf(idx []v1.Descriptor) []string {
	var out []string
	for _, d := range idx {
		out = append(out, Format(*d.Platform))
	}
	return out
}

// TestBaseChildForRebase pins how rebase's base child is chosen for a
// variant: the same build (SameBuild), a child without os.version first
// for a HostProcess variant, else the newest child, where a child without
// a readable os.version is never newer than another; change is !sameBuild.
func TestBaseChildForRebase(t *testing.T) {
	rchild := func(os, osVersion string) v1.Descriptor {
		p := Platform{OS: os, Architecture: "amd64", OSVersion: osVersion}
		return v1.Descriptor{MediaType: types.OCIManifestSchema1, Platform: &p, Digest: v1.Hash{Algorithm: "sha256", Hex: os + ":" + osVersion}}
	}
	base := []v1.Descriptor{
		rchild("linux", ""),
		rchild("windows", "10.0.20348.3091"),
		rchild("windows", "10.0.26100.9999"),
		rchild("windows", "10.0.26100.33674"),
		rchild("windows", ""),
	}
	unreadable := []v1.Descriptor{rchild("windows", "junk"), rchild("windows", "")}
	for _, tc := range []struct {
		variant Platform
		base    []v1.Descriptor
		pick    string // "" for none
		change  bool
	}{
		{rwin("10.0.20348.1"), base, "windows:10.0.20348.3091", false},
		{rwin("10.0.26100.1"), base, "windows:10.0.26100.9999", false}, // the first of the build
		{rwin("10.0.17763.1"), base, "windows:10.0.26100.33674", true},
		{rwin(""), base, "windows:", false},
		{rwin(""), base[:4], "windows:10.0.26100.33674", false}, // no build to keep: the newest
		{rwin("junk"), append([]v1.Descriptor{rchild("windows", "10.0.20348.1")}, unreadable...), "windows:junk", false},
		{rwin("10.0.17763.1"), append(unreadable, rchild("windows", "10.0.20348.1")), "windows:10.0.20348.1", true},
		{rwin("10.0.17763.1"), unreadable, "windows:junk", true},
		{Platform{OS: "linux", Architecture: "amd64"}, base, "linux:", false},
		{Platform{OS: "linux", Architecture: "arm64"}, base, "", false},
	} {
		d, same, ok := BaseChild(tc.base, tc.variant)
		change := ok && !same
		got := ""
		if ok {
			got = d.Digest.Hex
		}
		if got != tc.pick || change != tc.change {
			t.Errorf("pick for %s = %q (change %v), want %q (change %v)", Format(tc.variant), got, change, tc.pick, tc.change)
		}
	}
}

func rwin(osVersion string) Platform {
	return Platform{OS: "windows", Architecture: "amd64", OSVersion: osVersion}
}
