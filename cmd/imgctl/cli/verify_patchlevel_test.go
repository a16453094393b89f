package cli

import (
	"strings"
	"testing"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/internal/testing/sariftest"
	"github.com/imgctl/imgctl/policy"
)

// TestVerifyPatchLevelPolicy runs verify --policy with a patchLevel
// section on an image whose Windows variants are on August 2026's
// revisions: on 2026-12-01 they are 3 revisions and 3 Patch Tuesdays
// behind, the fix 89 days old, ltsc2022 in extended support and ltsc2025
// in mainstream; on 2032-01-15 ltsc2022's extended support has ended.
func TestVerifyPatchLevelPolicy(t *testing.T) {
	t.Parallel()
	reg := regtest.New(t)
	b := mcrFixture(t, reg)
	app := patchApp(t, reg, b, "3m", "10.0.20348.4500", "10.0.26100.3400")
	for _, tc := range []struct {
		name, doc, at string
		code          int
		want          map[string]string // rule → severity of its findings, "" for none
	}{
		{"no section: no patch-level check", "version: 1\n", "2026-12-01", 0,
			map[string]string{policy.RuleBaseBehind: "", policy.RuleBaseExtendedSupport: ""}},
		{"no limits: warnings", "patchLevel: {}\n", "2026-12-01", 0,
			map[string]string{policy.RuleBaseBehind: "warning", policy.RuleBaseExtendedSupport: "warning", policy.RuleBaseOutOfSupport: ""}},
		{"within the limits", "patchLevel: {maxPatchTuesdaysBehind: 3, maxFixAgeDays: 89}\n", "2026-12-01", 0,
			map[string]string{policy.RuleBaseBehind: "warning"}},
		{"too many Patch Tuesdays", "patchLevel: {maxPatchTuesdaysBehind: 2}\n", "2026-12-01", 1,
			map[string]string{policy.RuleBaseBehind: "error"}},
		{"a fix too old", "patchLevel: {maxFixAgeDays: 88}\n", "2026-12-01", 1,
			map[string]string{policy.RuleBaseBehind: "error"}},
		{"extended support not allowed", "patchLevel: {allowedPhases: [mainstream]}\n", "2026-12-01", 1,
			map[string]string{policy.RuleBaseBehind: "warning", policy.RuleBaseExtendedSupport: "error"}},
		{"inside mainstream: no lifecycle finding", "patchLevel: {allowedPhases: [mainstream]}\n", "2026-09-20", 0,
			map[string]string{policy.RuleBaseBehind: "warning", policy.RuleBaseExtendedSupport: ""}},
		{"after extended support", "patchLevel: {}\n", "2032-01-15", 1,
			map[string]string{policy.RuleBaseOutOfSupport: "error", policy.RuleBaseExtendedSupport: "warning"}},
		{"ended allowed", "patchLevel: {allowedPhases: [mainstream, extended, ended]}\n", "2032-01-15", 0,
			map[string]string{policy.RuleBaseOutOfSupport: "warning"}},
		{"severity override", "patchLevel: {}\nrules: {errors: [base-behind]}\n", "2026-12-01", 1,
			map[string]string{policy.RuleBaseBehind: "error"}},
	} {
		pol := writePolicy(t, tc.doc)
		out, errOut, code := run(t, "verify", app, "--policy", pol, "--at", tc.at, "-o", "json")
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d\n%s%s", tc.name, code, tc.code, out, errOut)
			continue
		}
		rep := decodeReport(t, out)
		for rule, sev := range tc.want {
			if got := severities(rep, rule); got != sev {
				t.Errorf("%s: %s findings %q, want %q\n%s", tc.name, rule, got, sev, out)
			}
		}
	}
	for _, doc := range []string{"patchLevel: {allowedPhases: [eol]}\n", "patchLevel: {maxFixAgeDays: -1}\n", "patchLevel: {maxPatchTuesday: 1}\n"} {
		if out, errOut, code := run(t, "verify", app, "--policy", writePolicy(t, doc)); code != 2 || !strings.Contains(errOut, "invalid policy") {
			t.Errorf("%q: exit %d, want 2\n%s%s", doc, code, out, errOut)
		}
	}
	if out, errOut, code := run(t, "verify", app, "--policy", writePolicy(t, "patchLevel: {}\n"), "--at", "12/01/2026"); code != 2 || !strings.Contains(errOut, "--at") {
		t.Errorf("bad --at: exit %d\n%s%s", code, out, errOut)
	}
}

// severities returns the distinct severities of rule's findings in rep,
// joined: "" when there is none, "warning", "error", or "error,warning".
func severities(rep jsonReport, rule string) string {
	seen := map[string]bool{}
	for _, f := range rep.Findings {
		if f.Rule == rule {
			seen[f.Severity] = true
		}
	}
	var out []string
	for _, s := range []string{"error", "warning"} {
		if seen[s] {
			out = append(out, s)
		}
	}
	return strings.Join(out, ",")
}

// TestVerifyPatchLevelSARIF checks that verify -o sarif carries the
// patch-level findings, valid against the SARIF 2.1.0 schema, with their
// levels and the variant as a logical location.
func TestVerifyPatchLevelSARIF(t *testing.T) {
	t.Parallel()
	reg := regtest.New(t)
	b := mcrFixture(t, reg)
	app := patchApp(t, reg, b, "6m", "10.0.20348.4350", "10.0.26100.3280")
	pol := writePolicy(t, "patchLevel: {maxPatchTuesdaysBehind: 1}\n")
	out, errOut, code := run(t, "verify", app, "--policy", pol, "--at", "2032-01-15", "-o", "sarif")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errOut)
	}
	if err := sariftest.Validate([]byte(out)); err != nil {
		t.Fatalf("not a valid SARIF 2.1.0 log: %v\n%s", err, out)
	}
	var l sarifLog
	decode(t, out, &l)
	var ids []string
	for _, r := range l.Runs[0].Tool.Driver.Rules {
		ids = append(ids, r.ID)
	}
	// The patch-level rules first, then the others the findings name.
	if len(ids) < 3 || strings.Join(ids[:3], ",") != strings.Join([]string{policy.RuleBaseBehind, policy.RuleBaseOutOfSupport, policy.RuleBaseExtendedSupport}, ",") {
		t.Errorf("rules %q", ids)
	}
	levels := map[string][]string{}
	for _, r := range l.Runs[0].Results {
		levels[r.RuleID] = append(levels[r.RuleID], r.Level)
		if r.RuleID == policy.RuleBaseBehind && !strings.Contains(r.Message.Text, "6 Patch Tuesday(s) behind") {
			t.Errorf("message %q", r.Message.Text)
		}
	}
	if strings.Join(levels[policy.RuleBaseBehind], ",") != "error,error" || strings.Join(levels[policy.RuleBaseOutOfSupport], ",") != "error" ||
		strings.Join(levels[policy.RuleBaseExtendedSupport], ",") != "warning" || !strings.Contains(out, `"fullyQualifiedName": "sha256:`) {
		t.Errorf("levels %v\n%s", levels, out)
	}
}

// TestPromotePatchLevel checks that promote applies the policy's
// patchLevel limits: an image too far behind is not promoted (exit 1, no
// tag at the destination), one within them is.
func TestPromotePatchLevel(t *testing.T) {
	t.Parallel()
	reg := regtest.New(t)
	b := mcrFixture(t, reg)
	app := patchApp(t, reg, b, "1m", "10.0.20348.4600", "10.0.26100.3480")
	strict := writePolicy(t, "patchLevel: {maxFixAgeDays: 20}\n")
	dst := reg.Host() + "/release/app:1"
	if out, errOut, code := run(t, "promote", app, dst, "--policy", strict, "--at", "2026-12-01"); code != 1 || !strings.Contains(out+errOut, "base-behind") {
		t.Fatalf("26-day-old fix under a 20-day limit: exit %d, want 1\n%s%s", code, out, errOut)
	}
	if out, errOut, code := run(t, "inspect", dst); code != 2 {
		t.Fatalf("the destination exists after a refused promote: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := run(t, "promote", app, dst, "--policy", strict, "--at", "2026-11-20"); code != 0 {
		t.Fatalf("15-day-old fix: exit %d, want 0\n%s%s", code, out, errOut)
	}
}
