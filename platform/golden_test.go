package platform_test

import (
	"testing"

	"github.com/imgctl/imgctl/internal/testing/enginegolden"
	"github.com/imgctl/imgctl/platform"
)

// dockerStore is, for each release of the table, the Docker releases whose
// containerd image store links the same platforms version through
// platforms.Only (the table's "only" column).
var dockerStore = map[string]string{"1.7.30": "27.5.1", "2.1.5": "28.3.2", "2.2.7": "29.4.0", "2.3.4": "29.7.0"}

func candidates(es []enginegolden.Entry) []platform.Candidate {
	var out []platform.Candidate
	for _, e := range es {
		c := platform.Candidate{Config: ptr(platform.FromSpec(e.Config))}
		if e.Platform != nil {
			c.Platform = ptr(platform.FromSpec(*e.Platform))
		}
		out = append(out, c)
	}
	return out
}

func ptr(p platform.Platform) *platform.Platform { return &p }

// TestProfilesEqualReleases runs every profile on the golden table's cases
// and compares its choice with what the release's own images.Manifest and
// platforms code chose (internal/testing/enginegolden regenerates the table from
// that code and fails when it changes). Every case must agree.
func TestProfilesEqualReleases(t *testing.T) {
	tab, err := enginegolden.Load("testdata/engines.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Results) != len(enginegolden.Releases) {
		t.Fatalf("table has %d releases, want %d", len(tab.Results), len(enginegolden.Releases))
	}
	check := func(label string, e platform.Engine, want []int) {
		agree := 0
		for i, c := range tab.Cases {
			host := platform.Platform{OS: "windows", Architecture: "amd64", OSVersion: c.Host}
			got := e.Select(host, candidates(c.Entries))
			if got == want[i] {
				agree++
				continue
			}
			t.Errorf("%s (%s): case %d %s on host %s: profile runs entry %d, the release runs %d", label, e.Name(), i, c.Name, c.Host, got, want[i])
		}
		t.Logf("%s (%s): %d of %d cases agree", label, e.Name(), agree, len(tab.Cases))
	}
	for _, r := range tab.Results {
		e, rng, err := platform.EngineForRelease("containerd", r.Release)
		if err != nil {
			t.Fatal(err)
		}
		if rng.Platforms != r.Platforms {
			t.Errorf("containerd %s links platforms %s, the range says %s", r.Release, r.Platforms, rng.Platforms)
		}
		check("containerd@"+r.Release, e, r.Default)
		if d, ok := dockerStore[r.Release]; ok {
			e, rng, err := platform.EngineForRelease("docker+containerd-store", d)
			if err != nil {
				t.Fatal(err)
			}
			if rng.Platforms != r.Platforms {
				t.Errorf("docker %s's containerd store: range says platforms %s, the table's release links %s", d, rng.Platforms, r.Platforms)
			}
			check("docker@"+d+"+containerd-store", e, r.Only)
		}
	}
}
