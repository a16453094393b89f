package patchlevel

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/registry"
)

func date(t *testing.T, s string) platform.Date {
	t.Helper()
	d, err := platform.ParseDate(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestCheckIssueExample is the issue's example read through a registry: a
// variant on September's monthly revision, with September's out-of-band
// revision, October's and November's newer, is 3 revisions and 2 Patch
// Tuesdays behind. Each revision costs its twin's manifest and config.
func TestCheckIssueExample(t *testing.T) {
	reg := regtest.New(t)
	revs := []regtest.MCRRevision{
		{OSVersion: "10.0.20348.2700", Created: ts(t, "2024-09-05T18:00:00Z")},
		{OSVersion: "10.0.20348.2705", Created: ts(t, "2024-09-26T18:00:00Z")}, // out-of-band
		{OSVersion: "10.0.20348.2762", Created: ts(t, "2024-10-03T18:00:00Z")},
		{OSVersion: "10.0.20348.2849", Created: ts(t, "2024-11-07T18:00:00Z")},
		{OSVersion: "10.0.17763.6414", Created: ts(t, "2024-11-07T18:00:00Z")}, // another build
	}
	if _, err := regtest.PushMCRBase(reg, "windows/servercore", map[string]uint32{"ltsc2022": 20348, "ltsc2019": 17763}, revs); err != nil {
		t.Fatal(err)
	}
	rc := registry.New()
	base, err := rc.ParseReference(reg.Host() + "/windows/servercore:ltsc2022")
	if err != nil {
		t.Fatal(err)
	}
	sub := Subject{Platform: platform.Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.20348.2700"}, Digest: "sha256:app", Base: base}
	reg.ResetStats()
	rep, err := Check(context.Background(), []Subject{sub}, Options{Registry: rc, At: date(t, "2024-11-20")})
	if err != nil {
		t.Fatal(err)
	}
	v := rep.Variants[0]
	if v.Status != StatusBehind || *v.RevisionsBehind != 3 || *v.PatchTuesdaysBehind != 2 || *v.FixAvailableDays != 55 ||
		v.Newest.Version != "10.0.20348.2849" || v.Release != "ltsc2022" || v.Lifecycle.Phase != platform.PhaseMainstream ||
		v.Published.Format(time.DateOnly) != "2024-09-05" || len(v.Newer) != 3 || v.Newer[0].Cycle.String() != "2024-09-10" {
		t.Errorf("report: %+v", v)
	}
	st := reg.Stats()
	// One tag list, and a manifest and a config for each of the 4 revisions.
	if st.Tags != 1 || st.Manifests != 4 || st.Blobs != 4 {
		t.Errorf("requests: %s", st)
	}

	// Two more Checks of a run share one Cache (imgctl patch's images): the
	// first reads as above, the second, of a variant two revisions newer,
	// reads nothing, and reports the same as a Check of its own.
	cache := NewCache(rc)
	newer := sub
	newer.Platform.OSVersion = "10.0.20348.2762"
	// A Check whose context is cancelled leaves nothing in the cache that
	// a live Check would be handed.
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	dead := NewCache(rc)
	if _, err := Check(cancelled, []Subject{sub}, Options{Registry: rc, At: date(t, "2024-11-20"), Cache: dead}); err == nil {
		t.Errorf("a cancelled Check returned no error")
	}
	rep, err = Check(context.Background(), []Subject{sub}, Options{Registry: rc, At: date(t, "2024-11-20"), Cache: dead})
	if err != nil || rep.Variants[0].Status != StatusBehind || *rep.Variants[0].RevisionsBehind != 3 {
		t.Errorf("after a cancelled Check, the cache gave %+v (%v), want 3 revisions behind", rep.Variants[0], err)
	}
	for i, s := range []Subject{sub, newer} {
		reg.ResetStats()
		rep, err := Check(context.Background(), []Subject{s}, Options{Registry: rc, At: date(t, "2024-11-20"), Cache: cache})
		if err != nil {
			t.Fatal(err)
		}
		st := reg.Stats()
		if want := [2]int{1, 0}[i]; st.Tags != want || st.Manifests != 4*want || st.Blobs != 4*want {
			t.Errorf("check %d through the cache: requests %s, want %d tag list(s) and %d manifests and configs", i, st, want, 4*want)
		}
		alone, err := Check(context.Background(), []Subject{s}, Options{Registry: registry.New(), At: date(t, "2024-11-20")})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(rep.Variants[0])
		want, _ := json.Marshal(alone.Variants[0])
		if string(got) != string(want) {
			t.Errorf("check %d through the cache: %s, alone: %s", i, got, want)
		}
	}

}

func ts(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestCheckUnknown checks that what cannot be told is reported with the
// reason, never guessed.
func TestCheckUnknown(t *testing.T) {
	reg := regtest.New(t)
	revs := []regtest.MCRRevision{{OSVersion: "10.0.26100.3000", Created: ts(t, "2025-02-06T18:00:00Z")}}
	if _, err := regtest.PushMCRBase(reg, "windows/nanoserver", map[string]uint32{"ltsc2025": 26100}, revs); err != nil {
		t.Fatal(err)
	}
	rc := registry.New()
	ref := func(s string) Subject {
		r, err := rc.ParseReference(reg.Host() + s)
		if err != nil {
			t.Fatal(err)
		}
		return Subject{Base: r}
	}
	win := func(s Subject, v string) Subject {
		s.Platform = platform.Platform{OS: "windows", Architecture: "amd64", OSVersion: v}
		return s
	}
	subjects := []Subject{
		win(Subject{}, "10.0.26100.3000"),                        // no base
		win(ref("/windows/nanoserver:ltsc2025"), ""),             // no os.version
		win(ref("/windows/nanoserver:ltsc2025"), "10.0.20348.1"), // no tags of the build
		win(ref("/windows/nanoserver:ltsc2025"), "10.0.26100.2999"),
		win(ref("/windows/absent:ltsc2025"), "10.0.26100.3000"),
		win(ref("/windows/nanoserver:ltsc2025"), "10.0.26100.3000"), // current
		win(ref("/windows/nanoserver:ltsc2025"), "10.0.19042.1000"), // an unknown release
	}
	rep, err := Check(context.Background(), subjects, Options{Registry: rc, At: date(t, "2025-03-01")})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{
		"names no base image",
		"no readable os.version",
		"has no 10.0.20348.REVISION tags",
		"has no tag of the variant's revision 10.0.26100.2999",
		"cannot list the tags of",
		"",
		"has no 10.0.19042.REVISION tags",
	} {
		v := rep.Variants[i]
		if want == "" {
			if v.Status != StatusCurrent || *v.RevisionsBehind != 0 || v.FixAvailableDays != nil || v.Lifecycle == nil {
				t.Errorf("%d: %+v, want current", i, v)
			}
			continue
		}
		if v.Status != StatusUnknown || !strings.Contains(v.Reason, want) || v.RevisionsBehind != nil {
			t.Errorf("%d: %s %q, want unknown: %q", i, v.Status, v.Reason, want)
		}
	}
	// 20H2 is named from Microsoft's tags, but no lifecycle is guessed.
	if v := rep.Variants[6]; v.Release != "20H2" || v.Lifecycle != nil || !strings.Contains(v.LifecycleReason, "lists no base image of build 19042") {
		t.Errorf("19042: release %q lifecycle %+v (%q)", v.Release, v.Lifecycle, v.LifecycleReason)
	}
	if v := rep.Variants[2]; v.Release != "ltsc2022" || v.Lifecycle == nil {
		t.Errorf("the lifecycle is known without tags: %+v", v)
	}
}
