package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"
)

// buildOverheadGoal is the target: imgctl build within 5% of
// buildctl in wall time and in registry requests.
const buildOverheadGoal = 5.0

// buildReport renders the build cases' part of RESULTS.md.
type buildReport struct {
	runs  int
	tools []tool
	cases []caseResult
	now   time.Time // zero: time.Now()
	// warmup is each tool's untimed warm-up build by case, in run order.
	warmup map[string][]string
	// load is the 1-minute load average before and after the measured runs, by case.
	load map[string][2]string
	// startup is each tool's process start-up alone (measureStartup).
	startup map[string]time.Duration
	// extra are sections rendered elsewhere, by case name (coldCase,
	// servercoreCase, bakeCase), and extraGoals their goals for the terminal.
	extra      map[string]string
	extraGoals []goal
}

// addExtra adds a section rendered elsewhere and its goals; an empty
// section (no row selected) adds nothing.
func (r *buildReport) addExtra(name, section string, goals []goal) {
	if section == "" {
		return
	}
	if r.extra == nil {
		r.extra = map[string]string{}
	}
	r.extra[name] = section
	r.extraGoals = append(r.extraGoals, goals...)
}

// Markers delimit the build part and each build case's section, so that a
// run of some cases keeps the others' sections from the previous report.
const (
	buildBegin = "<!-- build-bench:begin -->"
	buildEnd   = "<!-- build-bench:end -->"
)

var buildSectionRE = regexp.MustCompile(`(?s)<!-- build-case:([a-z0-9-]+):begin -->.*?<!-- build-case:[a-z0-9-]+:end -->`)

// buildHeader is the part's title and method, the same for every run.
func buildHeader() string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("# Benchmark: imgctl build against buildctl\n\n")
	w("The issue \"imgctl build\" asks for an overhead within %.0f%% of raw `buildctl build` for the same Dockerfile, "+
		"daemon and cache state. Each case section below says when and how often it was measured.\n\n", buildOverheadGoal)
	w("The sections after the build cases (`%s`, `%s`, `%s`, `%s`) measure other things than imgctl build against "+
		"buildctl; each starts registries (and, for `%s`, buildkitd) of its own and describes its method in its section.\n\n",
		fleetCase, fleet1000Case, patchlevelCase, sbomCase, sbomCase)
	w("## Method (build cases)\n\n")
	w("- One in-process registry (internal/testing/regtest, plain HTTP on 127.0.0.1) with the same request and byte counting " +
		"as above; the bases are seeded into it by internal/testing/buildtest.SeedBases (`HOST/golang:1.26` with the host's Go " +
		"toolchain, `HOST/distroless/static:nonroot` an index of linux/amd64 and linux/arm64, `HOST/nanoserver:ltsc2022` " +
		"and `:ltsc2025` with their os.version). One buildkitd (this module's, runc worker, its config marking the " +
		"registry as plain HTTP) serves every build of both tools.\n")
	w("- Both tools run as child processes (`internal/tools/bench/.bin/imgctl` from this checkout, `internal/tools/bench/.bin/buildctl` built from "+
		"this module's buildkit %s), so wall time includes process start-up for both.\n", buildkitVersion)
	w("- **Warm cache only.** Before the measured runs each tool does one untimed build of the same inputs, so every " +
		"measured solve is a cache hit and what is timed is the solve, the export and the push (plus, for imgctl, its " +
		"base resolution and index merge). A cold build (cache pruned, Go cross-compiled for each platform) is not " +
		"measured: on this 2-core machine it takes minutes per run and would dominate the bench's runtime, and it " +
		"would dilute any overhead of imgctl's own into the compile time. The exceptions are `" + coldCase + "` " +
		"and `" + servercoreCase + "` below: cold Windows builds with no compile, on a fresh buildkitd per run, to count " +
		"the base bytes moved.\n")
	w("- Every measured run pushes to a fresh repository `bench/<case>/<tool>-runN`; the order of the tools rotates " +
		"from run to run. The `imgctl` row runs with `--no-verify`, as buildctl does not check what it pushed; " +
		"`imgctl+verify` (its default post-push verify) is shown for information. Overhead = (imgctl − buildctl) / " +
		"buildctl of the medians.\n\n")
	return b.String()
}

// section renders one build case.
func (r *buildReport) section(ctx context.Context, cr caseResult) string {
	now := r.now
	if now.IsZero() {
		now = time.Now()
	}
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("<!-- build-case:%s:begin -->\n", cr.c.Name())
	w("## %s: %s\n\n", cr.c.Name(), cr.c.Title())
	var vs []string
	for _, t := range r.tools {
		vs = append(vs, fmt.Sprintf("%s %s", t.Name(), t.Version()))
	}
	w("Measured on %s: %s %s/%s, nproc %s; %s; median of %d warm runs per tool.\n\n",
		now.UTC().Format("2006-01-02 15:04 MST"), runtime.Version(), runtime.GOOS, runtime.GOARCH, nproc(ctx),
		strings.Join(vs, ", "), r.runs)
	w("%s\n\n", cr.c.Describe())
	if ws := r.warmup[cr.c.Name()]; len(ws) > 0 {
		w("Untimed warm-up builds, in order (the first one fills the cache for this case): %s.", strings.Join(ws, ", "))
		if l, ok := r.load[cr.c.Name()]; ok {
			w(" 1-minute load average before and after the measured runs: %s and %s (nproc %s); "+
				"other work on the machine makes wall times noisy, see min–max.", l[0], l[1], nproc(ctx))
		}
		w("\n\n")
	}
	w("%s", requestTable(cr.tools, true))
	w("\nWhat each result contains (read back after each run, not counted):\n\n")
	writeResultTable(w, cr.tools)
	w("\n")
	for _, tr := range cr.tools {
		if s := summarize(tr.samples); s.Failed > 0 && s.Failed < s.Runs {
			w("- %s failed %d of %d runs; first error: %s\n", tr.tool.Name(), s.Failed, s.Runs, mdEscape(errText(s.FirstErr)))
		}
	}
	if d := requestDiff(cr); d != "" {
		w("- %s\n", d)
	}
	if l := r.startupLine(); l != "" {
		w("- %s\n", l)
	}
	w("%s", goalList(buildGoals(cr)))
	w("\n<!-- build-case:%s:end -->\n", cr.c.Name())
	return b.String()
}

// buildGoals computes imgctl's overhead over buildctl in one case: the
// goal on the --no-verify row, and the verify row for information.
func buildGoals(cr caseResult) []goal {
	var base *toolResult
	for _, tr := range cr.tools {
		if tr.tool.Name() == "buildctl" {
			base = tr
		}
	}
	var gs []goal
	for _, tr := range cr.tools {
		if !strings.HasPrefix(tr.tool.Name(), primary) {
			continue
		}
		g := goal{title: fmt.Sprintf("%s: `%s` overhead over buildctl within %.0f%% (wall time and requests)",
			cr.c.Name(), tr.tool.Name(), buildOverheadGoal)}
		if tr.tool.Name() != primary {
			g.title += " — for information, not the goal"
		}
		ms := summarize(tr.samples)
		switch {
		case base == nil:
			g.detail = "buildctl not measured."
		case !ms.ok():
			g.detail = fmt.Sprintf("%s failed: %s.", tr.tool.Name(), errText(ms.FirstErr))
		case !summarize(base.samples).ok():
			g.detail = fmt.Sprintf("buildctl failed: %s.", errText(summarize(base.samples).FirstErr))
		default:
			bs := summarize(base.samples)
			wall := overhead(float64(ms.Wall), float64(bs.Wall))
			reqs := overhead(float64(ms.Total), float64(bs.Total))
			g.ok = wall <= buildOverheadGoal && reqs <= buildOverheadGoal
			g.detail = fmt.Sprintf("Wall %s vs %s: **%+.1f%%**; requests %d vs %d: **%+.1f%%** (medians).",
				fmtWall(ms.Wall), fmtWall(bs.Wall), wall, ms.Total, bs.Total, reqs)
			if cr.c.(*buildCase).windows {
				g.detail += " buildctl's row is its three solves only, without the index merge it cannot do."
			}
		}
		gs = append(gs, g)
	}
	return gs
}

func overhead(me, base float64) float64 {
	if base == 0 {
		return 0
	}
	return (me - base) / base * 100
}

// wallRange is the fastest and slowest successful run.
func wallRange(ss []sample) (lo, hi time.Duration) {
	var ws []time.Duration
	for _, s := range ss {
		if s.Err == nil {
			ws = append(ws, s.Wall)
		}
	}
	if len(ws) == 0 {
		return 0, 0
	}
	return slices.Min(ws), slices.Max(ws)
}

// goalText is the build goals for the terminal.
func (r *buildReport) goalText() string {
	if r == nil {
		return ""
	}
	var gs []goal
	for _, cr := range r.cases {
		gs = append(gs, buildGoals(cr)...)
	}
	return goalLines(append(gs, r.extraGoals...), true)
}

// writeResults writes RESULTS.md to path: md (the index and rebase cases'
// report), then the build part. Empty md keeps the previous file's report;
// build cases not run this time keep their previous sections.
func writeResults(ctx context.Context, path, md string, br *buildReport) error {
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	oldMain, oldBuild, _ := strings.Cut(string(old), buildBegin)
	if md == "" {
		md = oldMain
	}
	oldSections := map[string]string{}
	for _, m := range buildSectionRE.FindAllStringSubmatch(oldBuild, -1) {
		oldSections[m[1]] = m[0] + "\n"
	}
	newSections := map[string]string{}
	if br != nil {
		for _, cr := range br.cases {
			newSections[cr.c.Name()] = br.section(ctx, cr)
		}
	}
	if br != nil {
		maps.Copy(newSections, br.extra)
	}
	var names, sections []string
	for _, c := range buildCases() {
		names = append(names, c.Name())
	}
	for _, n := range append(names, coldCase, servercoreCase, bakeCase, fleetCase, fleet1000Case, patchlevelCase, sbomCase) {
		if s, ok := newSections[n]; ok {
			sections = append(sections, s)
		} else if s, ok := oldSections[n]; ok {
			sections = append(sections, s)
		}
	}
	out := strings.TrimRight(md, "\n") + "\n"
	if len(sections) > 0 {
		out += "\n" + buildBegin + "\n\n" + buildHeader() + strings.Join(sections, "\n") + "\n" + buildEnd + "\n"
	}
	return os.WriteFile(path, []byte(out), 0o644)
}

var (
	traceTargetRE = regexp.MustCompile(`bench/[a-z0-9-]+/[a-z0-9-]+-run[0-9]+`)
	traceDigestRE = regexp.MustCompile(`sha256(:|%3A)[0-9a-f]{64}`)
	traceUploadRE = regexp.MustCompile(`/uploads/[^?]+`)
	traceFromRE   = regexp.MustCompile(`from=[^&]+`)
	traceStateRE  = regexp.MustCompile(`[?&]_state=[^&]*`)
)

// normalizeTrace turns a trace line ("METHOD status in out URI") into
// "METHOD URI status" with the run's repository, digests and upload
// sessions replaced, so that two tools' requests can be compared.
func normalizeTrace(line string) string {
	f := strings.Fields(line)
	if len(f) < 5 {
		return line
	}
	uri := traceTargetRE.ReplaceAllString(f[4], "TARGET")
	uri = traceDigestRE.ReplaceAllString(uri, "DIGEST")
	uri = traceUploadRE.ReplaceAllString(uri, "/uploads/ID")
	uri = traceFromRE.ReplaceAllString(uri, "from=REPO")
	uri = traceStateRE.ReplaceAllString(uri, "")
	return f[0] + " " + uri + " → " + f[1]
}

// requestDiff compares the requests of imgctl's and buildctl's first
// successful runs: what imgctl sent that buildctl did not, and the reverse.
func requestDiff(cr caseResult) string {
	first := func(n string) []string {
		for _, tr := range cr.tools {
			if tr.tool.Name() != n {
				continue
			}
			for _, s := range tr.samples {
				if s.Err == nil && len(s.Trace) > 0 {
					return s.Trace
				}
			}
		}
		return nil
	}
	me, base := first(primary), first("buildctl")
	if me == nil || base == nil {
		return ""
	}
	counts := map[string]int{}
	for _, l := range me {
		counts[normalizeTrace(l)]++
	}
	for _, l := range base {
		counts[normalizeTrace(l)]--
	}
	var more, fewer []string
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		switch n := counts[k]; {
		case n > 0:
			more = append(more, fmt.Sprintf("%d× `%s`", n, k))
		case n < 0:
			fewer = append(fewer, fmt.Sprintf("%d× `%s`", -n, k))
		}
	}
	if len(fewer) == 0 {
		fewer = []string{"none"}
	}
	return fmt.Sprintf("Requests of imgctl's first run beyond buildctl's (TARGET is the run's repository, DIGEST any digest): %s. "+
		"buildctl's beyond imgctl's: %s.", strings.Join(more, ", "), strings.Join(fewer, ", "))
}
