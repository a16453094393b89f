package verify

import (
	"fmt"
	"slices"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/snapshot"
)

// testSnapshot is an index of one image per platform, in the order given.
func testSnapshot(ps ...string) *snapshot.Snapshot {
	s := &snapshot.Snapshot{Index: &v1.IndexManifest{}}
	for i, p := range ps {
		pl, err := platform.Parse(p)
		if err != nil {
			panic(err)
		}
		s.Entries = append(s.Entries, snapshot.Entry{
			Descriptor: v1.Descriptor{MediaType: types.OCIManifestSchema1, Platform: &pl, Digest: v1.Hash{Algorithm: "sha256", Hex: fmt.Sprintf("%064d", i)}},
			Manifest:   &v1.Manifest{},
			Config:     &v1.ConfigFile{OS: pl.OS, Architecture: pl.Architecture, OSVersion: pl.OSVersion},
		})
	}
	return s
}

func target(t *testing.T, name string, engines ...platform.Engine) Host {
	t.Helper()
	tg, err := platform.ParseTarget(name)
	if err != nil {
		t.Fatal(err)
	}
	return TargetHost(tg, engines)
}

func TestEvaluateHosts(t *testing.T) {
	s := testSnapshot(
		"linux/amd64",
		"windows/amd64:10.0.26100.33674",
		"windows/amd64:10.0.26100.9999",
		"windows/amd64:10.0.17763.1",
		"windows/amd64:10.0.14393.1",
	)
	ev := EvaluateHosts(s, []Host{
		target(t, "ltsc2025"),
		target(t, "ltsc2022", platform.DockerEngine{}),
		{Name: "linux-node", Platform: platform.Platform{OS: "linux", Architecture: "arm64"}, Engines: []platform.Engine{platform.ContainerdEngine()}},
	})
	type sel struct {
		engine string
		index  int
		runs   bool
		quirk  string
	}
	got := map[string][]sel{}
	for _, r := range ev.Hosts {
		for _, s := range r.Selections {
			q := ""
			if s.Quirk != nil {
				q = fmt.Sprintf("%s<%s@%d", s.Quirk.Selected, s.Quirk.Newer, s.Quirk.Index)
			}
			got[r.Host.Name] = append(got[r.Host.Name], sel{s.Engine.Name(), s.Index, s.Runs, q})
		}
	}
	want := map[string][]sel{
		// containerd orders by string: 9999 sorts above 33674.
		// containerd 2.1.6 and later order by string: 9999 sorts above
		// 33674. Earlier lines keep index order, which lists 33674 first.
		"ltsc2025": {
			{"containerd", 2, true, "10.0.26100.9999<10.0.26100.33674@1"},
			{"containerd-os-features", 2, true, "10.0.26100.9999<10.0.26100.33674@1"},
			{"containerd-ltsc-floor", 2, true, "10.0.26100.9999<10.0.26100.33674@1"},
			{"containerd-index-order", 1, true, ""}, {"containerd-legacy", 1, true, ""}, {"docker", 1, true, ""}},
		// Docker keeps an older build, which does not start.
		"ltsc2022":   {{"docker", 3, false, ""}},
		"linux-node": {{"containerd", -1, false, ""}},
	}
	for name, w := range want {
		if !slices.Equal(got[name], w) {
			t.Errorf("%s: %+v, want %+v", name, got[name], w)
		}
	}
	if r := ev.Hosts[0]; len(r.Host.Engines) != len(platform.Engines()) || r.Deciding().Engine.Name() != platform.Containerd {
		t.Errorf("empty Engines should mean every profile, containerd first: %+v", r.Host.Engines)
	}
	row := ev.Hosts[0].Deciding().Row
	if row != (TargetResult{Target: "ltsc2025", Build: 26100, Engine: "containerd", Releases: "containerd 2.4.0–2.x", Selected: s.Entries[2].Descriptor.Digest.String(), OSVersion: "10.0.26100.9999"}) {
		t.Errorf("row %+v", row)
	}
	if row := ev.Hosts[2].Deciding().Row; row != (TargetResult{Target: "linux-node", Engine: "containerd", Releases: "containerd 2.4.0–2.x"}) {
		t.Errorf("linux row %+v", row)
	}
	// 33674 is served: index order runs it on ltsc2025. The 17763 variant
	// is selected on ltsc2022 but does not start there.
	if got := ev.Unselected(); !slices.Equal(got, []int{3, 4}) {
		t.Errorf("Unselected %v, want [3 4]", got)
	}
	if got := ev.Unserved(); !slices.Equal(got, []int{1, 3, 4}) {
		t.Errorf("Unserved %v, want [1 3 4]", got)
	}
}
