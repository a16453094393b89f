package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/imgctl/imgctl/internal/testing/disttest"
	"github.com/imgctl/imgctl/internal/testing/mcrtest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/rebase"
	"github.com/imgctl/imgctl/registry"
)

// mcrNanoserver is the base repository of the patch-level tests, laid out
// like mcr.microsoft.com/windows/nanoserver.
const mcrNanoserver = mcrtest.Nanoserver

// mcrFixture pushes the MCR-like base repository (mcrtest.PushBase).
func mcrFixture(t *testing.T, reg registryHost) *regtest.MCRBase {
	t.Helper()
	b, err := mcrtest.PushBase(reg)
	return must(t, b, err)
}

// patchApp pushes app:tag on the bases' revisions v2022 and v2025
// (mcrtest.PushApp).
func patchApp(t *testing.T, reg registryHost, b *regtest.MCRBase, tag, v2022, v2025 string) string {
	t.Helper()
	ref, err := mcrtest.PushApp(reg, b, tag, v2022, v2025)
	return must(t, ref, err)
}

// patchJSON is bases -o json's patch level of one variant.
type patchJSON struct {
	Platform            string `json:"platform"`
	Release             string `json:"release"`
	Build               uint32 `json:"build"`
	Revision            uint32 `json:"revision"`
	Published           string `json:"published"`
	RevisionsBehind     *int   `json:"revisions_behind"`
	PatchTuesdaysBehind *int   `json:"patch_tuesdays_behind"`
	FixAvailableDays    *int   `json:"fix_available_days"`
	Newest              *struct {
		Version string `json:"version"`
	} `json:"newest"`
	Lifecycle *struct {
		Phase string `json:"phase"`
		Until string `json:"until"`
	} `json:"lifecycle"`
	Status string `json:"status"`
	Reason string `json:"reason"`
}

// basesPatchJSON is the part of bases -o json these tests read.
type basesPatchJSON struct {
	At       string `json:"at"`
	Variants []struct {
		Platform     string     `json:"platform"`
		OldBase      string     `json:"old_base"`
		OldBaseIndex string     `json:"old_base_index"`
		OldBaseImage string     `json:"old_base_image"`
		NewBaseIndex string     `json:"new_base_index"`
		NewBaseImage string     `json:"new_base_image"`
		Stale        bool       `json:"stale"`
		PatchLevel   *patchJSON `json:"patch_level"`
	} `json:"variants"`
}

// want is one variant's expected patch level.
type wantPatch struct {
	revision, behind, tuesdays int
	fixDays                    int // -1: none (current)
	newest, phase, until       string
}

func (w wantPatch) check(t *testing.T, where string, p *patchJSON) {
	t.Helper()
	if p == nil {
		t.Fatalf("%s: no patch_level", where)
	}
	fix := -1
	if p.FixAvailableDays != nil {
		fix = *p.FixAvailableDays
	}
	got := fmt.Sprintf("rev %d, %s behind, %s Patch Tuesdays, fix %d days, newest %v, %v", p.Revision, ptr(p.RevisionsBehind), ptr(p.PatchTuesdaysBehind), fix, p.Newest, p.Lifecycle)
	if p.Revision != uint32(w.revision) || p.RevisionsBehind == nil || *p.RevisionsBehind != w.behind ||
		p.PatchTuesdaysBehind == nil || *p.PatchTuesdaysBehind != w.tuesdays || fix != w.fixDays ||
		p.Newest == nil || p.Newest.Version != w.newest || p.Lifecycle == nil || p.Lifecycle.Phase != w.phase || p.Lifecycle.Until != w.until {
		t.Errorf("%s: %s\nwant %+v", where, got, w)
	}
}

func ptr(n *int) string {
	if n == nil {
		return "nil"
	}
	return fmt.Sprint(*n)
}

// TestBasesPatchLevelDist checks the patch-level report against the CNCF
// distribution registry on an MCR-like base repository, for images built
// on revisions one, three and six months old, on three dates: the last
// day of ltsc2022's mainstream support, in its extended support, and
// after its extended support.
func TestBasesPatchLevelDist(t *testing.T) {
	dst := distLogin(t)
	b := mcrFixture(t, dst)
	apps := map[string]string{
		"1m": patchApp(t, dst, b, "1m", "10.0.20348.4600", "10.0.26100.3480"), // October 2026
		"3m": patchApp(t, dst, b, "3m", "10.0.20348.4500", "10.0.26100.3400"), // August
		"6m": patchApp(t, dst, b, "6m", "10.0.20348.4350", "10.0.26100.3280"), // May's monthly, before May's out-of-band
	}
	// Dates: created 5 days before each Patch Tuesday, at 18:00 UTC:
	// May 05-07 (out-of-band 05-26), Aug 08-06, Sep 09-03, Oct 10-08,
	// Nov 11-05. The first newer revision of the 3-month variant is
	// September's, of the 6-month variant May's out-of-band.
	type row struct {
		app       string
		w22, w25  wantPatch
		wantStale bool
	}
	for _, tc := range []struct {
		at   string
		rows []row
	}{
		{"2026-10-13", []row{ // ltsc2022's last day of mainstream; November's revisions are not out yet
			{"1m", wantPatch{4600, 0, 0, -1, "10.0.20348.4600", "mainstream", "2026-10-13"}, wantPatch{3480, 0, 0, -1, "10.0.26100.3480", "mainstream", "2029-10-09"}, true},
			{"3m", wantPatch{4500, 2, 2, 40, "10.0.20348.4600", "mainstream", "2026-10-13"}, wantPatch{3400, 2, 2, 40, "10.0.26100.3480", "mainstream", "2029-10-09"}, true},
			{"6m", wantPatch{4350, 6, 5, 140, "10.0.20348.4600", "mainstream", "2026-10-13"}, wantPatch{3280, 6, 5, 140, "10.0.26100.3480", "mainstream", "2029-10-09"}, true},
		}},
		{"2026-12-01", []row{ // extended support
			{"1m", wantPatch{4600, 1, 1, 26, "10.0.20348.4650", "extended", "2031-10-14"}, wantPatch{3480, 1, 1, 26, "10.0.26100.3520", "mainstream", "2029-10-09"}, true},
			{"3m", wantPatch{4500, 3, 3, 89, "10.0.20348.4650", "extended", "2031-10-14"}, wantPatch{3400, 3, 3, 89, "10.0.26100.3520", "mainstream", "2029-10-09"}, true},
			{"6m", wantPatch{4350, 7, 6, 189, "10.0.20348.4650", "extended", "2031-10-14"}, wantPatch{3280, 7, 6, 189, "10.0.26100.3520", "mainstream", "2029-10-09"}, true},
		}},
		{"2032-01-15", []row{ // after ltsc2022's extended support; ltsc2025 in extended
			{"1m", wantPatch{4600, 1, 1, 1897, "10.0.20348.4650", "ended", "2031-10-14"}, wantPatch{3480, 1, 1, 1897, "10.0.26100.3520", "extended", "2034-10-10"}, true},
			{"3m", wantPatch{4500, 3, 3, 1960, "10.0.20348.4650", "ended", "2031-10-14"}, wantPatch{3400, 3, 3, 1960, "10.0.26100.3520", "extended", "2034-10-10"}, true},
			{"6m", wantPatch{4350, 7, 6, 2060, "10.0.20348.4650", "ended", "2031-10-14"}, wantPatch{3280, 7, 6, 2060, "10.0.26100.3520", "extended", "2034-10-10"}, true},
		}},
	} {
		for _, r := range tc.rows {
			out, errOut, code := run(t, "bases", apps[r.app], "--at", tc.at, "-o", "json")
			if code != 1 {
				t.Fatalf("%s at %s: exit %d, want 1 (stale)\n%s%s", r.app, tc.at, code, out, errOut)
			}
			var got basesPatchJSON
			decode(t, out, &got)
			if got.At != tc.at || len(got.Variants) != 2 {
				t.Fatalf("%s at %s: %s", r.app, tc.at, out)
			}
			for i, w := range []wantPatch{r.w22, r.w25} {
				v := got.Variants[i]
				w.check(t, fmt.Sprintf("%s at %s, %s", r.app, tc.at, v.Platform), v.PatchLevel)
				// Also fix: the old and new bases at the same level.
				if v.OldBaseIndex != v.OldBase || v.NewBaseIndex == "" || v.OldBaseImage == "" || v.NewBaseImage == "" ||
					v.OldBaseIndex == v.OldBaseImage || v.Stale != (v.OldBaseImage != v.NewBaseImage) {
					t.Errorf("%s: base digests not at one level: %+v", v.Platform, v)
				}
			}
		}
	}
	out, errOut, code := run(t, "bases", apps["6m"], "--at", "2032-01-15")
	for _, want := range []string{"LIFECYCLE", "10.0.20348.4650 (2026-11-05)", "ended 2031-10-14", "out of support", "6 Patch Tuesday(s) behind", "2060 days"} {
		if code != 1 || !strings.Contains(out, want) {
			t.Errorf("text: exit %d, no %q\n%s%s", code, want, out, errOut)
		}
	}
}

// decode decodes the JSON s into v, leaving out fields v does not name.
func decode(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("decoding JSON: %v\n%s", err, s)
	}
}

// TestBasesPatchLevelRequestsDist bounds the requests of the patch-level
// report: on an index with two Windows variants whose bases have 12 newer
// revision tags each, bases makes at most what it made before the report
// (rebase.Check), plus one tag list per base repository, plus 3 reads per
// newer revision. With MCR's -amd64 twins a revision costs 2 reads (the
// image manifest and its config), and the variant's own revision 2 more.
func TestBasesPatchLevelRequestsDist(t *testing.T) {
	dst := distLogin(t)
	b := mcrFixture(t, dst)
	// December 2025: January to November and May's out-of-band are newer.
	app := patchApp(t, dst, b, "dec", "10.0.20348.4100", "10.0.26100.3080")
	dst.ResetRequests()
	out, errOut, code := run(t, "bases", app, "--at", "2026-12-01", "-o", "json")
	total := len(dst.Requests())
	var got basesPatchJSON
	decode(t, out, &got)
	if code != 1 || len(got.Variants) != 2 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, v := range got.Variants {
		if v.PatchLevel == nil || v.PatchLevel.RevisionsBehind == nil || *v.PatchLevel.RevisionsBehind != 12 {
			t.Fatalf("%s: want 12 revisions behind: %+v", v.Platform, v.PatchLevel)
		}
	}
	dst.ResetRequests()
	ref := regtest.Must(registry.New().ParseReference(app))(t)
	if _, err := rebase.Check(context.Background(), ref, rebase.Options{Registry: registry.New()}); err != nil {
		t.Fatal(err)
	}
	before := len(dst.Requests())
	const repos, newer = 1, 2 * 12
	bound := before + repos + 3*newer
	t.Logf("bases: %d requests; without the patch-level report %d; bound %d", total, before, bound)
	if total > bound {
		t.Errorf("bases made %d requests, want at most %d (%d + %d tag list + 3 × %d newer revisions)\n%s", total, bound, before, repos, newer, requestList(dst.Requests()))
	}
}

func requestList(rs []disttest.Request) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString(r.String() + "\n")
	}
	return b.String()
}
