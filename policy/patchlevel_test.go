package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/imgctl/imgctl/findings"
	"github.com/imgctl/imgctl/patchlevel"
	"github.com/imgctl/imgctl/platform"
)

// lifecycleVariant is a current variant of build on date at, its phase
// from platform's lifecycle table, or none when the table has no row.
func lifecycleVariant(t *testing.T, build uint32, at string) patchlevel.Variant {
	t.Helper()
	d, err := platform.ParseDate(at)
	if err != nil {
		t.Fatal(err)
	}
	zero := 0
	v := patchlevel.Variant{Platform: "windows/amd64", Digest: "sha256:aa", Build: build, Revision: 1, Status: patchlevel.StatusCurrent, RevisionsBehind: &zero}
	l, ok := platform.LifecycleOf(build)
	if !ok {
		v.Release, v.LifecycleReason = "23H2", "Microsoft's base image lifecycle table lists no base image of build 25398"
		return v
	}
	v.Release = l.Release
	v.Lifecycle = &patchlevel.Lifecycle{Phase: l.Phase(d), Until: l.PhaseEnd(d), MainstreamEnd: l.MainstreamEnd, ExtendedEnd: l.ExtendedEnd}
	return v
}

// TestPatchLevelLifecycleFindings checks the lifecycle rules on the
// dates of ltsc2022's phases in Microsoft's table, with and without
// allowedPhases, and for a build the table has no row for.
func TestPatchLevelLifecycleFindings(t *testing.T) {
	for _, tc := range []struct {
		name    string
		build   uint32
		at      string
		allowed []string
		rule    string // "" for no lifecycle finding
		sev     findings.Severity
		msg     string
	}{
		{"mainstream", 20348, "2026-10-13", nil, "", "", ""},
		{"extended", 20348, "2026-12-01", nil, RuleBaseExtendedSupport, findings.Warning, "extended support until 2031-10-14"},
		{"extended, not allowed", 20348, "2026-12-01", []string{"mainstream"}, RuleBaseExtendedSupport, findings.Error, "extended support until 2031-10-14"},
		{"ended", 20348, "2032-01-15", nil, RuleBaseOutOfSupport, findings.Error, "left extended support on 2031-10-14"},
		{"ended, allowed", 20348, "2032-01-15", []string{"mainstream", "extended", "ended"}, RuleBaseOutOfSupport, findings.Warning, "left extended support"},
		{"no lifecycle row", 25398, "2026-12-01", nil, RuleBaseOutOfSupport, findings.Error, "support cannot be shown"},
		{"no lifecycle row, the default written out", 25398, "2026-12-01", []string{"mainstream", "extended"}, RuleBaseOutOfSupport, findings.Error, "leave out ended"},
		{"no lifecycle row, phases limited", 25398, "2026-12-01", []string{"mainstream"}, RuleBaseOutOfSupport, findings.Error, "leave out ended"},
		{"no lifecycle row, ended allowed", 25398, "2026-12-01", []string{"mainstream", "extended", "ended"}, RuleBaseOutOfSupport, findings.Warning, "support cannot be shown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at, _ := platform.ParseDate(tc.at)
			r := PatchLevelRule{PatchLevel: PatchLevel{AllowedPhases: tc.allowed}, At: at}
			got := r.Evaluate(&patchlevel.Report{At: at, Variants: []patchlevel.Variant{lifecycleVariant(t, tc.build, tc.at)}})
			if tc.rule == "" {
				if len(got) != 0 {
					t.Fatalf("findings %+v, want none", got)
				}
				return
			}
			if len(got) != 1 || got[0].Rule != tc.rule || got[0].Severity != tc.sev || !strings.Contains(got[0].Message, tc.msg) {
				t.Fatalf("findings %+v, want one %s %s containing %q", got, tc.sev, tc.rule, tc.msg)
			}
		})
	}
}

// TestPatchLevelBehindFindings checks base-behind against the policy's
// limits: a warning without one, an error past either limit.
func TestPatchLevelBehindFindings(t *testing.T) {
	at, _ := platform.ParseDate("2026-12-01")
	published := time.Date(2026, 9, 5, 0, 0, 0, 0, time.UTC)
	three, two, forty := 3, 2, 40
	v := lifecycleVariant(t, 26100, "2026-12-01")
	v.Status, v.RevisionsBehind, v.PatchTuesdaysBehind, v.FixAvailableDays = patchlevel.StatusBehind, &three, &two, &forty
	v.Published, v.Newest = &published, &patchlevel.Revision{Version: "10.0.26100.7000"}
	one, thirty := 1, 30
	for _, tc := range []struct {
		name string
		pl   PatchLevel
		sev  findings.Severity
		msg  string
	}{
		{"no limit", PatchLevel{}, findings.Warning, "3 revision(s) and 2 Patch Tuesday(s) behind 10.0.26100.7000"},
		{"within the limits", PatchLevel{MaxPatchTuesdaysBehind: &two, MaxFixAgeDays: &forty}, findings.Warning, "available for 40 day(s)"},
		{"too many Patch Tuesdays", PatchLevel{MaxPatchTuesdaysBehind: &one}, findings.Error, "the policy allows 1 Patch Tuesday(s)"},
		{"a fix waited too long", PatchLevel{MaxFixAgeDays: &thirty}, findings.Error, "the policy allows a fix to wait 30 day(s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := PatchLevelRule{PatchLevel: tc.pl, At: at}.Evaluate(&patchlevel.Report{At: at, Variants: []patchlevel.Variant{v}})
			if len(got) != 1 || got[0].Rule != RuleBaseBehind || got[0].Severity != tc.sev || !strings.Contains(got[0].Message, tc.msg) {
				t.Fatalf("findings %+v, want one %s base-behind containing %q", got, tc.sev, tc.msg)
			}
		})
	}
}
