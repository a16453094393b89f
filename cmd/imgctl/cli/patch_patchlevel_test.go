package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/imgctl/imgctl/fleet"
	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/policy"
)

// TestPatchPatchLevel: patch reports how far behind each Windows variant
// was (the numbers TestBasesPatchLevelDist checks bases for, on the same
// fixture and date), the image the most of its variants; it reads each
// base repository's tags once per run, not once per image, for the report
// and the policy's gate alike; the gate judges the rebased index on --at;
// and --merge-reports keeps the patch levels.
func TestPatchPatchLevel(t *testing.T) {
	t.Parallel()
	reg := regtest.New(t)
	b := mcrFixture(t, reg)
	three := patchApp(t, reg, b, "3m", "10.0.20348.4500", "10.0.26100.3400")
	// ltsc2022 six months behind, ltsc2025 three: the image's figure is
	// the larger, the first variant's.
	six := patchApp(t, reg, b, "6m", "10.0.20348.4350", "10.0.26100.3400")
	type level struct{ revisions, tuesdays, days int }
	want := map[string]struct {
		image    int
		w22, w25 level
	}{
		three: {3, level{3, 3, 89}, level{3, 3, 89}},
		six:   {6, level{7, 6, 189}, level{3, 3, 89}},
	}
	images := func(out string) map[string]fleet.Image {
		t.Helper()
		got := decodePatch(t, out).byRef()
		if len(got) != 2 || got[three].Ref == "" || got[six].Ref == "" {
			t.Fatalf("report of %d image(s), want %s and %s:\n%s", len(got), three, six, out)
		}
		return got
	}

	reg.ResetStats()
	out, errOut, code := run(t, "patch", three, six, "--dry-run", "--at", "2026-12-01", "--jobs", "1", "-o", "json")
	if code != 0 {
		t.Fatalf("patch --dry-run: exit %d\n%s%s", code, out, errOut)
	}
	// One tag list of the app's repository per image (its release tags),
	// and one of the base repository for the whole run.
	if st := reg.Stats(); st.Tags != 3 {
		t.Errorf("tag lists: %s, want 3 (the app's twice, the base's once)", st)
	}
	for ref, im := range images(out) {
		w := want[ref]
		if im.Outcome != fleet.Skipped || im.PatchTuesdaysBehind == nil || *im.PatchTuesdaysBehind != w.image {
			t.Errorf("%s: %s, %v Patch Tuesdays behind, want skipped (dry run), %d", ref, im.Outcome, im.PatchTuesdaysBehind, w.image)
		}
		var got []level
		for _, v := range im.Variants {
			pl := v.PatchLevel
			if pl == nil || pl.RevisionsBehind == nil || pl.PatchTuesdaysBehind == nil || pl.FixAvailableDays == nil {
				t.Fatalf("%s %s: patch level %+v", ref, v.Platform, pl)
			}
			got = append(got, level{*pl.RevisionsBehind, *pl.PatchTuesdaysBehind, *pl.FixAvailableDays})
		}
		if len(got) != 2 || got[0] != w.w22 || got[1] != w.w25 {
			t.Errorf("%s: patch levels %v, want %v and %v", ref, got, w.w22, w.w25)
		}
	}

	out, _, _ = run(t, "patch", three, "--dry-run", "--at", "2026-12-01")
	if !strings.Contains(out, "[3 Patch Tuesday(s) behind, fix available 89 days, ltsc2022 extended until 2031-10-14]") {
		t.Errorf("text report without the patch level:\n%s", out)
	}

	// Shards' reports merge with their patch levels.
	dir := t.TempDir()
	var files []string
	for i, ref := range []string{three, six} {
		out, errOut, code := run(t, "patch", ref, "--dry-run", "--at", "2026-12-01", "-o", "json")
		if code != 0 {
			t.Fatalf("patch --dry-run %s: exit %d\n%s", ref, code, errOut)
		}
		f := filepath.Join(dir, []string{"a.json", "b.json"}[i])
		if err := os.WriteFile(f, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	out, errOut, code = run(t, "patch", "--merge-reports", strings.Join(files, ","), "-o", "json")
	if code != 0 {
		t.Fatalf("--merge-reports: exit %d\n%s", code, errOut)
	}
	for ref, im := range images(out) {
		if im.PatchTuesdaysBehind == nil || *im.PatchTuesdaysBehind != want[ref].image || im.Variants[0].PatchLevel == nil || im.Variants[0].PatchLevel.Lifecycle == nil {
			t.Errorf("merged %s lost its patch level: %+v", ref, im)
		}
	}

	// The gate judges the rebased index: ltsc2022 in extended support on
	// 2026-12-01 is refused where the policy allows mainstream alone ...
	pol := writePolicy(t, "patchLevel: {allowedPhases: [mainstream]}\n")
	out, errOut, code = run(t, "patch", three, six, "--policy", pol, "--at", "2026-12-01", "-o", "json")
	if code != ExitFailed {
		t.Fatalf("patch --policy: exit %d, want %d (extended support refused)\n%s%s", code, ExitFailed, out, errOut)
	}
	for ref, im := range images(out) {
		rules := map[string]bool{}
		for _, f := range im.Findings {
			rules[f.Rule] = true
		}
		if im.Outcome != fleet.Failed || im.Failure != fleet.FailureCheck || !rules[policy.RuleBaseExtendedSupport] {
			t.Errorf("%s: %s/%s %v, want a failed check with %s", ref, im.Outcome, im.Failure, im.Findings, policy.RuleBaseExtendedSupport)
		}
	}
	// ... and passes on 2026-10-01, in mainstream support, where the
	// rebased index, on the newest revisions, is 0 Patch Tuesdays behind.
	// The gate's checks (before signing, and promote's) read through the
	// run's cache: the base repository's tags are listed once.
	pol = writePolicy(t, "patchLevel: {allowedPhases: [mainstream], maxPatchTuesdaysBehind: 0}\n")
	reg.ResetStats()
	out, errOut, code = run(t, "patch", three, six, "--policy", pol, "--at", "2026-10-01", "-o", "json")
	if code != 0 {
		t.Fatalf("patch --policy --at 2026-10-01: exit %d, want 0\n%s%s", code, out, errOut)
	}
	if st := reg.Stats(); st.Tags != 3 {
		t.Errorf("tag lists: %s, want 3 (the app's twice, the base's once for the report and every gate)", st)
	}
	for ref, im := range images(out) {
		if im.Outcome != fleet.Promoted {
			t.Errorf("%s: %s (%s), want promoted", ref, im.Outcome, im.Reason)
		}
	}
}
