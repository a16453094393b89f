package verify

import (
	"strings"
	"testing"

	"github.com/imgctl/imgctl/findings"
	"github.com/imgctl/imgctl/platform"
)

func findingsOf(r *Report, rule string) []findings.Finding {
	var out []findings.Finding
	for _, f := range r.Findings {
		if f.Rule == rule {
			out = append(out, f)
		}
	}
	return out
}

func targets(t *testing.T, names ...string) []platform.Target {
	t.Helper()
	ts, err := platform.ParseTargets(names)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// TestReleaseLines runs issue 24's three examples through Evaluate with the
// default engines (every containerd line decides, Docker warns) and with a
// policy's engines.
func TestReleaseLines(t *testing.T) {
	t.Run("oldest first on ltsc2025: the lines disagree, index order runs the older build", func(t *testing.T) {
		s := testSnapshot("linux/amd64", "windows/amd64:10.0.20348.4297", "windows/amd64:10.0.26100.6584")
		r := Evaluate("app", s, Options{Targets: targets(t, "ltsc2025")})
		if !r.Passed {
			t.Fatalf("both variants start on 26100; findings %+v", r.Findings)
		}
		d := findingsOf(r, RuleEngineDisagreement)
		if len(d) != 1 {
			t.Fatalf("want one engine-disagreement, got %+v", r.Findings)
		}
		for _, want := range []string{"containerd 2.1.6–2.x, docker ≥ 25.0.0 run", "10.0.26100.6584", "containerd 1.7.19–2.1.5, docker (containerd store) 27.0.0–28.x run", "10.0.20348.4297"} {
			if !strings.Contains(d[0].Message, want) {
				t.Errorf("message %q lacks %q", d[0].Message, want)
			}
		}
		o := findingsOf(r, RuleOrderPicksOlder)
		if len(o) != 1 || o[0].Severity != findings.Warning || !strings.Contains(o[0].Message, "containerd 1.7.19–2.1.5") {
			t.Fatalf("order-picks-older: %+v", o)
		}
		// A fleet on AKS's containerd 2.0.4 makes it an error.
		r = Evaluate("app", s, Options{Targets: targets(t, "ltsc2025"), Engines: platform.Engines(), Deciding: []string{platform.ContainerdIndexOrder}})
		if o := findingsOf(r, RuleOrderPicksOlder); r.Passed || len(o) != 1 || o[0].Severity != findings.Error {
			t.Fatalf("with the policy's engine: passed %v, %+v", r.Passed, o)
		}
	})
	t.Run("newest first: every line agrees on 26100", func(t *testing.T) {
		s := testSnapshot("windows/amd64:10.0.26100.2894", "windows/amd64:10.0.20348.3091")
		r := Evaluate("app", s, Options{Targets: targets(t, "ltsc2025")})
		if len(findingsOf(r, RuleEngineDisagreement)) != 0 || len(findingsOf(r, RuleOrderPicksOlder)) != 0 {
			t.Fatalf("findings %+v", r.Findings)
		}
		for _, row := range r.Targets {
			if row.OSVersion != "10.0.26100.2894" {
				t.Errorf("%s runs %s", row.Engine, row.OSVersion)
			}
		}
	})
	t.Run("only ltsc2022 on a 26200 client: 2.1.6 to 2.3 run nothing", func(t *testing.T) {
		s := testSnapshot("linux/amd64", "windows/amd64:10.0.20348.4297")
		r := Evaluate("app", s, Options{Targets: targets(t, "10.0.26200")})
		nv := findingsOf(r, RuleNoVariantForTarget)
		if r.Passed || len(nv) != 1 || !strings.Contains(nv[0].Message, "containerd 2.1.6–2.3.x on 10.0.26200 (build 26200) run no variant") {
			t.Fatalf("want one no-variant-for-target naming containerd 2.1.6–2.3.x: %+v", r.Findings)
		}
		// A fleet that runs only containerd 2.4 passes, and the others warn.
		r = Evaluate("app", s, Options{Targets: targets(t, "10.0.26200"), Engines: platform.Engines(), Deciding: []string{platform.Containerd}})
		if !r.Passed || len(findingsOf(r, RuleEngineDisagreement)) != 1 {
			t.Fatalf("passed %v, findings %+v", r.Passed, r.Findings)
		}
	})
}

// TestMixedCaseOS: an entry whose OS is "Windows" is a Windows entry to
// every engine (containerd lowercases it, Docker compares it
// case-insensitively), so verify's Windows rules apply to it too.
func TestMixedCaseOS(t *testing.T) {
	s := testSnapshot("windows/amd64:10.0.26100.6584", "windows/amd64")
	for i := range s.Entries {
		p := *s.Entries[i].Descriptor.Platform
		p.OS = "Windows"
		s.Entries[i].Descriptor.Platform = &p
		s.Entries[i].Config.OS = "Windows"
	}
	r := Evaluate("app", s, Options{Targets: targets(t, "ltsc2025")})
	if len(findingsOf(r, RuleMissingOSVersion)) != 1 {
		t.Errorf("the Windows entry without os.version is not reported: %+v", r.Findings)
	}
	for _, row := range r.Targets {
		if row.OSVersion != "10.0.26100.6584" {
			t.Errorf("%s runs %q, want 10.0.26100.6584", row.Engine, row.OSVersion)
		}
	}
}
