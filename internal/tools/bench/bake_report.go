package main

import (
	"context"
	"fmt"
	"maps"
	"runtime"
	"strings"
	"time"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// bakeStats is one row's figures over its runs.
type bakeStats struct {
	runTally
	wall, wallLo, wallHi time.Duration
	sum                  summary // request medians of the successful runs
	// solves are the first successful run's solves on builders A and B;
	// solvesVary: a later run's differ.
	solves     [2]map[string]int
	solvesVary bool
	solvesErr  error
	checkErr   error // the first run's whose tags read back wrong
	// spreadErr, for the pool row: the first run, with both builders'
	// history read, in which a builder solved nothing.
	spreadErr error
}

func (r *bakeRow) stats() bakeStats {
	var s bakeStats
	var runs []bakeRun
	runs, s.runTally = tallyRuns(r.runs, func(run bakeRun) sample { return run.sample })
	var ss []sample
	for n, run := range runs {
		ss = append(ss, run.sample)
		if s.checkErr == nil {
			s.checkErr = run.checkErr
		}
		if s.solvesErr == nil {
			s.solvesErr = run.solvesErr
		}
		if r.kind == bakePool && run.solvesErr == nil && s.spreadErr == nil {
			for i, m := range run.solves {
				if len(m) == 0 {
					s.spreadErr = fmt.Errorf("in successful timed run %d builder %c solved nothing", n+1, 'A'+i)
					break
				}
			}
		}
		if n == 0 {
			s.solves = run.solves
		} else if !maps.Equal(s.solves[0], run.solves[0]) || !maps.Equal(s.solves[1], run.solves[1]) {
			s.solvesVary = true
		}
	}
	if s.ok == 0 {
		return s
	}
	s.sum = summarize(ss)
	s.wall = s.sum.Wall
	s.wallLo, s.wallHi = wallRange(ss)
	return s
}

// row is the row of kind k, or nil.
func (rep *bakeReport) row(k bakeRowKind) *bakeRow {
	for _, r := range rep.rows {
		if r.kind == k {
			return r
		}
	}
	return nil
}

// compare is goal g on rows a and b, measured and without failures: ok
// reports whether pass(median a, median b) holds, and the detail gives
// both medians and their ratio.
func (rep *bakeReport) compare(g goal, a, b bakeRowKind, pass func(a, b time.Duration) bool) goal {
	ra, rb := rep.row(a), rep.row(b)
	switch {
	case ra == nil || rb == nil:
		g.detail = "a row was not measured."
		return g
	case ra.stats().ok == 0 || ra.stats().failed > 0:
		g.detail = fmt.Sprintf("`%s` failed: %s.", ra.name, errText(ra.stats().firstErr))
		return g
	case rb.stats().ok == 0 || rb.stats().failed > 0:
		g.detail = fmt.Sprintf("`%s` failed: %s.", rb.name, errText(rb.stats().firstErr))
		return g
	}
	sa, sb := ra.stats(), rb.stats()
	g.ok = sb.wall > 0 && pass(sa.wall, sb.wall)
	g.detail = fmt.Sprintf("`%s` %s vs `%s` %s: **%.2f×** (medians).", ra.name, fmtWall(sa.wall), rb.name, fmtWall(sb.wall),
		wallRatio(sa.wall, sb.wall))
	for _, s := range []bakeStats{sa, sb} {
		if s.checkErr != nil {
			g.ok = false
			g.detail += " A result read back wrong: " + hostRE.ReplaceAllString(errText(s.checkErr), "HOST") + "."
		}
	}
	return g
}

// againstOne adds to g's detail the ratio of row k's median to the bake
// on one builder's, when both were measured.
func (rep *bakeReport) againstOne(g *goal, k bakeRowKind) {
	if one, r := rep.row(bakeOneBuilder), rep.row(k); one != nil && r != nil {
		if s1, s := one.stats(), r.stats(); s1.ok > 0 && s.ok > 0 {
			g.detail += fmt.Sprintf(" Against the bake on 1 builder: %.2f×.", wallRatio(s.wall, s1.wall))
		}
	}
}

// goals are the two, the bake on one builder no slower than the
// builds one after the other (within bakeSlowerLimit) and on two builders
// (platforms split) faster, and the pool's: on a pool of two builders
// faster, which fails too when a builder of the pool solved nothing.
func (rep *bakeReport) goals() []goal {
	slower := rep.compare(goal{title: fmt.Sprintf("%s: a bake of %d targets no slower than %d imgctl builds one after the other "+
		"(1 builder, within %.0f%%)", bakeCase, rep.targets, rep.targets, (bakeSlowerLimit-1)*100)},
		bakeOneBuilder, bakeBuilds, func(a, b time.Duration) bool { return float64(a) <= float64(b)*bakeSlowerLimit })
	faster := rep.compare(goal{title: fmt.Sprintf("%s: on 2 builders, a bake of %d targets faster than %d imgctl builds one after the other",
		bakeCase, rep.targets, rep.targets)},
		bakeTwoBuilders, bakeBuilds, func(a, b time.Duration) bool { return a < b })
	rep.againstOne(&faster, bakeTwoBuilders)
	pool := rep.compare(goal{title: fmt.Sprintf("%s: on a pool of 2 builders, a bake of %d targets faster than %d imgctl builds one after the other",
		bakeCase, rep.targets, rep.targets)},
		bakePool, bakeBuilds, func(a, b time.Duration) bool { return a < b })
	rep.againstOne(&pool, bakePool)
	if r := rep.row(bakePool); r != nil {
		if err := r.stats().spreadErr; err != nil {
			pool.ok = false
			pool.detail += " The pool did not spread the targets: " + err.Error() + "."
		}
	}
	return []goal{slower, faster, pool}
}

// placeholders is the spec as the report shows commands: HOST, the
// builders A and B, CONTEXT.
func (rep *bakeReport) placeholders() bakeSpec {
	p := rep.spec
	p.host, p.addrA, p.addrB, p.ctxDir = "HOST", "unix:///A/buildkitd.sock", "unix:///B/buildkitd.sock", "CONTEXT"
	p.linuxBase = "HOST/bases/distroless/static:nonroot"
	p.windowsBase = "HOST/bases/nanoserver:{ltsc}"
	return p
}

// command is row k's command line as the report shows it.
func (rep *bakeReport) command(k bakeRowKind) string {
	p := rep.placeholders()
	if k == bakeBuilds {
		cmd := strings.Join(bakeBuildArgs(p, 0, bakeTags("HOST", k, 1, 1)[0]), " ")
		cmd = strings.NewReplacer("t1:v1", "tI:v1", "NAME=t1", "NAME=tI", "/run1/", "/runR/").Replace(cmd)
		return "for I in 1.." + fmt.Sprint(rep.targets) + ": `imgctl " + cmd + "`"
	}
	return "`imgctl " + strings.Join(bakeArgs(p, k, "docker-bake.hcl"), " ") + "`"
}

// section renders the case for RESULTS.md.
func (rep *bakeReport) section(ctx context.Context) string {
	now := rep.now
	if now.IsZero() {
		now = time.Now()
	}
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	n := rep.targets
	w("<!-- build-case:%s:begin -->\n", bakeCase)
	w("## %s: A bake of %d targets against %d imgctl builds one after the other, on 1 builder, 2 builders and a pool of 2\n\n",
		bakeCase, n, n)
	version := "imgctl"
	if len(rep.rows) > 0 {
		version += " " + rep.rows[0].tool.Version()
	}
	w("Measured on %s: %s %s/%s, nproc %s; %s; `-bake-targets %d -bake-jobs %d`; median of %d timed runs per row.\n\n",
		now.UTC().Format("2006-01-02 15:04 MST"), runtime.Version(), runtime.GOOS, runtime.GOARCH, nproc(ctx), version,
		n, rep.jobs, rep.runs)
	w("### Method\n\n")
	w("- **Registry**: the CNCF distribution registry (bin/registry, htpasswd auth) behind the bench's counting proxy; "+
		"every imgctl logs in through its private Docker config. Bases: `HOST/bases/distroless/static:nonroot` "+
		"(distroless-like, linux/amd64) and `HOST/bases/nanoserver:%s` (nanoserver-shaped, windows/amd64, os.version %s, "+
		"one layer of %s bytes: %s random bytes in the Windows layout).\n", bakeRelease, regtest.OSVersionLTSC2025,
		thousands(rep.baseSize), thousands(bakeBasePayload))
	w("- **Targets**: one bake file of %d targets `t1`…`t%d` (a default group of all), each the Dockerfile below with "+
		"`NAME=tI`, so each copies its own file and no two targets share a layer; platforms linux/amd64 and %s (one Linux "+
		"solve and one Windows solve per target: the Windows stage has COPY only and is grafted onto its base). Target "+
		"`t1` of the bake file:\n\n", n, n, bakeRelease)
	w("```hcl\n%s```\n\n", bakeTargetHCL(rep.placeholders(), 0, bakeTags("HOST", bakeOneBuilder, 1, 1)[0]))
	w("```dockerfile\n%s```\n\n", bakeDockerfile)
	w("- **Tags**: each target its own repository and tag, fresh in every run (tags are immutable in imgctl): "+
		"`HOST/bench/%s/<row>/runR/tI:v1`, the warm-up's `.../warmup/tI:v1` (and the fill of builder B before row 4's "+
		"`.../%s/%s/tI:v1`).\n", bakeCase, bakePool.slug(), bakeFillLabel)
	w("- **Rows**: every row runs with `--progress quiet --no-verify` and imgctl's default provenance (mode=min, a SLSA " +
		"provenance attestation per image, which bake also adds by default); the builds get the platforms, release, base " +
		"and args that bake derives from each target's block:\n")
	for _, k := range bakeKinds {
		w("  - `%s`: %s.", bakeRowName(k, n, rep.jobs), rep.command(k))
		switch k {
		case bakeBuilds:
			w(" %d processes, each waiting for the one before.", n)
		case bakeOneBuilder:
			w(" One process, %d targets at once, every solve on builder A.", rep.jobs)
		case bakeTwoBuilders:
			w(" One process, %d targets at once; each target's Linux solve goes to builder A and its Windows solve to "+
				"builder B (one node per platform is no pool: bake spreads the platforms over the nodes, as build does).", rep.jobs)
		case bakePool:
			w(" One process, %d targets at once, over a pool of builders A and B (each platform named on both): each "+
				"target that starts takes one builder for both its solves, the one running fewer targets (A on a tie)", rep.jobs)
			if rep.jobs > 1 {
				w(", so the first two go to A and B and each later one to the builder free first")
			} else {
				w(", so with one target at a time every target finds both idle and goes to A")
			}
			w("; bake notes on stderr which builder each target takes, and the table shows how the targets' solves " +
				"split between A and B.")
		}
		w("\n")
	}
	w("- **Builder state: warm.** Two buildkitd daemons (A and B, this module's, runc worker) are started fresh for the "+
		"case and serve every run of every row. Before the timed runs each row does one untimed warm-up run of the same "+
		"command into its own fresh tags, in row order, so that every timed solve is a cache hit on the daemon that runs "+
		"it and each row's imgctl, with its own HOME, has its local skeleton cache filled. Row 3's warm-up leaves B the "+
		"Windows solves only, and the pool may give any target to either builder, so before row 4's warm-up its imgctl "+
		"also bakes every target on B alone, untimed (%s), filling B with every target's Linux and Windows solves. What "+
		"is timed is the lint, the solves (cached), BuildKit's export and push of each image, the base resolution and the "+
		"index merge and push of each target, and for the builds the start-up of each process. The order of the rows "+
		"rotates from run to run.\n", "`imgctl "+strings.Join(bakeFillArgs(rep.placeholders(), "docker-bake.hcl"), " ")+"`")
	w("- Wall is the whole command (the %d builds in turn for row 1) as child processes; requests are every registry "+
		"request during the run, BuildKit's pushes included (medians). Solves are the records each builder's build "+
		"history holds for the run, by the platform asked for (the first timed run; base resolutions are not recorded).",
		n)
	if rep.load[0] != "" {
		w(" 1-minute load average before and after the timed runs: %s and %s; wall times on a busy machine are noisy, "+
			"see min–max.", rep.load[0], rep.load[1])
	}
	w("\n\n")
	t := newTable("row", "wall:", "wall min–max:", "requests:", "GET:", "HEAD:", "PUT:", "POST:", "PATCH:", "mounts:", "solves on builder A", "solves on builder B")
	for _, r := range rep.rows {
		s := r.stats()
		if s.ok == 0 {
			t.row(mdEscape(r.name), "failed: "+mdEscape(errText(s.firstErr)))
			continue
		}
		t.row(mdEscape(r.name), fmtWall(s.wall), fmtWall(s.wallLo)+"–"+fmtWall(s.wallHi), bold(s.sum.Total), s.sum.Get, s.sum.Head,
			s.sum.Put, s.sum.Post, s.sum.Patch, s.sum.Mounts, solveText(s.solves[0]), solveText(s.solves[1]))
	}
	w("%s\n", t)
	var warm []string
	for _, r := range rep.rows {
		warm = append(warm, fmt.Sprintf("`%s` %s", r.name, fmtWall(r.warmup)))
	}
	w("- Untimed warm-up runs, in order (the first fills A's cache; the fill of B runs before row 4's): %s.\n", strings.Join(warm, ", "))
	var bad []string
	for _, r := range rep.rows {
		s := r.stats()
		if r.kind == bakePool && s.ok > 0 {
			switch {
			case s.spreadErr != nil:
				w("- **`%s`: the pool did not spread the targets**: %s.\n", r.name, s.spreadErr)
			case s.solvesErr == nil:
				w("- `%s`: the targets' solves split between the builders as A: %s; B: %s (the first timed run); "+
					"both builders solved in every timed run.\n", r.name, solveText(s.solves[0]), solveText(s.solves[1]))
			}
		}
		if s.failed > 0 && s.ok > 0 {
			w("- `%s` failed %d of %d runs; first error: %s\n", r.name, s.failed, len(r.runs), mdEscape(errText(s.firstErr)))
		}
		if s.solvesVary {
			w("- `%s`: the builders' solves differed from run to run; the table shows the first run's.\n", r.name)
		}
		if s.solvesErr != nil {
			w("- `%s`: reading a builder's history: %s\n", r.name, mdEscape(errText(s.solvesErr)))
		}
		if s.checkErr != nil {
			bad = append(bad, fmt.Sprintf("`%s`: %s", r.name, mdEscape(hostRE.ReplaceAllString(errText(s.checkErr), "HOST"))))
		}
	}
	if len(bad) > 0 {
		w("- **Results read back wrong**: %s\n", strings.Join(bad, "; "))
	} else {
		w("- Results: every tag of every timed run, read back after the run, is an index of %s (besides attestation "+
			"manifests).\n", strings.Join(bakeWantPlatforms(), " and "))
	}
	w("\n### Goals\n\n")
	w("%s", goalList(rep.goals()))
	w("\n<!-- build-case:%s:end -->\n", bakeCase)
	return b.String()
}
