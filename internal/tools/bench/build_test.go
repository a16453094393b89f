package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

func buildSamples(total int, wall time.Duration) []sample {
	return []sample{{Stats: regtest.Stats{Head: total}, Wall: wall}}
}

// TestWriteResultsKeepsSections checks that a run of one build case keeps
// the index report and the other build case's section of the previous file.
func TestWriteResultsKeepsSections(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "RESULTS.md")
	cs := buildCases()
	mk := func(c *buildCase, me, base int) *buildReport {
		return &buildReport{runs: 1, cases: []caseResult{{c: c, tools: []*toolResult{
			{tool: fakeTool{"imgctl"}, samples: buildSamples(me, 104*time.Millisecond)},
			{tool: fakeTool{"buildctl"}, samples: buildSamples(base, 100*time.Millisecond)},
		}}}}
	}
	if err := writeResults(ctx, path, "# index report\n", mk(cs[1], 40, 39)); err != nil {
		t.Fatal(err)
	}
	if err := writeResults(ctx, path, "", mk(cs[0], 30, 20)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, want := range []string{"# index report", "## build-linux:", "## build-windows:",
		"**FAIL** build-linux", "**PASS** build-windows", "+50.0%", "+2.6%", "+4.0%"} {
		if !strings.Contains(got, want) {
			t.Errorf("RESULTS.md lacks %q:\n%s", want, got)
		}
	}
	if strings.Index(got, "## build-linux:") > strings.Index(got, "## build-windows:") {
		t.Error("build sections out of order")
	}
	if n := strings.Count(got, buildBegin); n != 1 {
		t.Errorf("%d build parts", n)
	}
	// A later index-only report replaces the index part and keeps both sections.
	if err := writeResults(ctx, path, "# new index report\n", nil); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(path)
	if got := string(b); strings.Contains(got, "# index report") || !strings.Contains(got, "## build-windows:") ||
		!strings.Contains(got, "## build-linux:") {
		t.Errorf("after an index-only run:\n%s", got)
	}
}

func TestRequestDiff(t *testing.T) {
	d := "sha256:" + strings.Repeat("ab", 32)
	line := func(method string, code int, uri string) string {
		return fmt.Sprintf("%-6s %3d %8d %8d %s", method, code, 0, 0, uri)
	}
	me := []sample{{Trace: []string{
		line("GET", 200, "/v2/"),
		line("HEAD", 404, "/v2/bench/build-linux/imgctl-run1/blobs/"+d),
		line("PUT", 201, "/v2/bench/build-linux/imgctl-run1/manifests/merged"),
	}}}
	base := []sample{{Trace: []string{
		line("HEAD", 404, "/v2/bench/build-linux/buildctl-run2/blobs/"+d),
		line("PUT", 201, "/v2/bench/build-linux/buildctl-run2/manifests/merged"),
		line("HEAD", 404, "/v2/bench/build-linux/buildctl-run2/manifests/merged"),
	}}}
	cr := caseResult{c: buildCases()[0], tools: []*toolResult{
		{tool: fakeTool{"imgctl"}, samples: me}, {tool: fakeTool{"buildctl"}, samples: base},
	}}
	got := requestDiff(cr)
	for _, want := range []string{"beyond buildctl's (TARGET", ": 1× `GET /v2/ → 200`.", "imgctl's: 1× `HEAD /v2/TARGET/manifests/merged → 404`."} {
		if !strings.Contains(got, want) {
			t.Errorf("requestDiff = %s\nwant it to contain %s", got, want)
		}
	}
}

// TestColdSection checks the cold case's report: the medians of base bytes
// moved, and the equivalence verdict on each tool's own layer entries.
func TestColdSection(t *testing.T) {
	entries := []string{"5 Hives link=\"\" size=0", "0 Files/app/app.exe link=\"\" size=20"}
	run := func(down, up int64) coldRun {
		r := coldRun{sample: buildSamples(20, time.Second)[0], baseDown: down, baseUp: up}
		if up == 0 {
			r.baseRead = 7
		}
		return r
	}
	rep := &coldReport{runs: 2, results: []*coldResult{
		{tool: fakeTool{"imgctl"}, runs: []coldRun{run(165, 0), run(165, 0)}, ref: "r1", baseKept: true, entries: entries},
		{tool: fakeTool{"imgctl@old"}, runs: []coldRun{run(165, 165), run(165, 165)}, ref: "r2", baseKept: true, entries: entries[:1]},
		{tool: fakeTool{"buildctl"}, runs: []coldRun{run(165, 165), run(165, 165)}, ref: "r3", baseKept: true, entries: entries},
		{tool: fakeTool{"crane"}, runs: []coldRun{run(165, 165)}, ref: "r4"},
	}}
	got := rep.section(context.Background(), "127.0.0.1:5000/bases/nanoserver:ltsc2025")
	for _, want := range []string{
		"| imgctl | 165 | 7 | 0 |", "| buildctl | 165 | 0 | 165 |",
		"own entries: `Hives`, `Files/app/app.exe`",
		"imgctl@old: **own entries differ** from imgctl's",
		"buildctl: the base's layer unchanged; own entries **identical** to imgctl's",
		"crane: **the image does not list the base's layer unchanged first**",
		"ltsc2025=HOST/bases/nanoserver:ltsc2025",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("section lacks %q:\n%s", want, got)
		}
	}
	path := filepath.Join(t.TempDir(), "RESULTS.md")
	if err := writeResults(context.Background(), path, "# index\n", &buildReport{extra: map[string]string{coldCase: got}}); err != nil {
		t.Fatal(err)
	}
	// A later run of another build case keeps the cold section, after it.
	cs := buildCases()
	br := &buildReport{runs: 1, cases: []caseResult{{c: cs[1], tools: []*toolResult{
		{tool: fakeTool{"imgctl"}, samples: buildSamples(40, time.Second)},
		{tool: fakeTool{"buildctl"}, samples: buildSamples(40, time.Second)},
	}}}}
	if err := writeResults(context.Background(), path, "", br); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
	if i, j := strings.Index(out, "## build-windows:"), strings.Index(out, "## "+coldCase+":"); i < 0 || j < i {
		t.Errorf("want the build-windows section, then the cold one:\n%s", out)
	}
}
