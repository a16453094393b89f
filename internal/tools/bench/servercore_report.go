package main

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// Goals of the servercore case (issue 27, point 4).
const (
	// scRSSGoal is the highest peak RSS any imgctl row may reach, in bytes (100 MB).
	scRSSGoal = 100e6
	// scFirstGoal: the first build within this factor of reading the base once.
	scFirstGoal = 1.2
	// scRegistryGoal: a build with the skeleton in the registry within
	// this factor of the same build on the 157 MiB base.
	scRegistryGoal = 1.1
)

// Row names the goals compare.
const (
	scRowFirst    = "imgctl"
	scRowRegistry = "imgctl+registry-skeleton"
	scRowReadBase = "crane blob | gzip -dc"
	scRowSmall    = "imgctl+registry-skeleton (157 MiB base)"
	scRowBuildctl = "buildctl"
)

// scStats is one row's figures over its successful runs.
type scStats struct {
	runTally
	wall, wallLo, wallHi                time.Duration
	clientKiB, daemonKiB                int64 // highest of the runs
	daemonUnknown                       bool  // a run's buildkitd VmHWM could not be read
	down, read, up, otherUp, reqs       int64 // medians
	get, head, put, post, patch, mounts int   // medians
}

func (r *scRow) stats() scStats {
	var s scStats
	var walls []time.Duration
	var down, read, up, other, reqs []int64
	var ss []sample
	runs, tally := tallyRuns(r.runs, func(run scRun) sample { return run.sample })
	s.runTally = tally
	for _, run := range runs {
		walls = append(walls, run.Wall)
		down, read, up = append(down, run.baseDown), append(read, run.baseRead), append(up, run.baseUp)
		other, reqs = append(other, run.otherUp), append(reqs, int64(run.Stats.Total()))
		s.clientKiB, s.daemonKiB = max(s.clientKiB, run.clientKiB), max(s.daemonKiB, run.daemonKiB)
		s.daemonUnknown = s.daemonUnknown || r.kind != scReadBase && run.daemonErr != nil
		ss = append(ss, run.sample)
	}
	if s.ok == 0 {
		return s
	}
	s.wall, s.wallLo, s.wallHi = median(walls), slices.Min(walls), slices.Max(walls)
	s.down, s.read, s.up, s.otherUp, s.reqs = median(down), median(read), median(up), median(other), median(reqs)
	sum := summarize(ss)
	s.get, s.head, s.put, s.post, s.patch, s.mounts = sum.Get, sum.Head, sum.Put, sum.Post, sum.Patch, sum.Mounts
	return s
}

// fmtKiB is a peak RSS in MB (10^6 bytes).
func fmtKiB(kib int64) string {
	return fmt.Sprintf("%.1f MB", float64(kib)*1024/1e6)
}

// fmtClient is a client's peak RSS, or "≤ floor" when it is no more than
// the bench's own RSS the client counted when it started (peakRSS).
func (r *scRow) fmtClient(kib int64) string {
	if f := r.rss.floorKiB; f > 0 && kib <= f+1024 {
		return "≤ " + fmtKiB(max(kib, f)) + " (the bench's RSS)"
	}
	return fmtKiB(kib)
}

// wallRatio is a/b, or 0 when b is 0.
func wallRatio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// row is the row named n, or nil.
func (rep *scReport) row(n string) *scRow {
	for _, r := range rep.rows {
		if r.name == n {
			return r
		}
	}
	return nil
}

// isImgctlRow reports whether r runs imgctl (the rows the RSS goal covers).
func (r *scRow) isImgctlRow() bool {
	_, ok := r.tool.(*imgctlBuild)
	return ok
}

// goals computes the case's goals from its rows; a goal whose rows were
// not measured or failed does not pass.
func (rep *scReport) goals() []goal {
	bc := rep.row(scRowBuildctl)
	beside := "buildctl not measured"
	if bc != nil {
		if s := bc.stats(); s.ok > 0 {
			beside = fmt.Sprintf("buildctl beside them: wall %s, client peak RSS %s, buildkitd peak RSS %s",
				fmtWall(s.wall), bc.fmtClient(s.clientKiB), fmtKiB(s.daemonKiB))
		} else {
			beside = "buildctl failed: " + errText(s.firstErr)
		}
	}

	rss := goal{ok: true, title: fmt.Sprintf("%s: imgctl peak RSS below %.0f MB in every imgctl row", servercoreCase, scRSSGoal/1e6)}
	var parts []string
	for _, r := range rep.rows {
		if !r.isImgctlRow() {
			continue
		}
		s := r.stats()
		if s.ok == 0 || s.failed > 0 {
			rss.ok = false
			parts = append(parts, fmt.Sprintf("`%s` failed", r.name))
			continue
		}
		if float64(s.clientKiB)*1024 >= scRSSGoal {
			rss.ok = false
		}
		parts = append(parts, fmt.Sprintf("`%s` **%s**", r.name, r.fmtClient(s.clientKiB)))
	}
	if len(parts) == 0 {
		rss.ok = false
		parts = append(parts, "no imgctl row measured")
	}
	rss.detail = "Highest peak RSS of the runs: " + strings.Join(parts, ", ") + "; " + beside + "."

	first := rep.ratioGoal(scRowFirst, scRowReadBase, scFirstGoal,
		"the first build (nothing cached anywhere) within %.1f× the wall time of reading and decompressing the base once")
	reg := rep.ratioGoal(scRowRegistry, scRowSmall, scRegistryGoal,
		"a build with the skeleton in the registry within %.1f× the wall time of the same build on the 157 MiB base")
	if r := rep.row(scRowRegistry); r != nil {
		if s := r.stats(); s.ok > 0 && s.read > 0 {
			reg.detail += fmt.Sprintf(" `%s` read %s base bytes per run (median): it did not take the skeleton from the registry.",
				r.name, thousands(s.read))
		}
	}
	if bc != nil {
		if s, b := bc.stats(), rep.row(scRowReadBase); s.ok > 0 && b != nil && b.stats().ok > 0 {
			first.detail += fmt.Sprintf(" buildctl: %s, %.2f× of `%s`.", fmtWall(s.wall), wallRatio(s.wall, b.stats().wall), scRowReadBase)
		}
		if s, b := bc.stats(), rep.row(scRowSmall); s.ok > 0 && b != nil && b.stats().ok > 0 {
			reg.detail += fmt.Sprintf(" buildctl on the servercore base: %s, %.2f× of `%s`.", fmtWall(s.wall), wallRatio(s.wall, b.stats().wall), scRowSmall)
		}
	}
	return []goal{rss, first, reg}
}

// ratioGoal is "row a's median wall within limit× row b's".
func (rep *scReport) ratioGoal(a, b string, limit float64, title string) goal {
	g := goal{title: servercoreCase + ": " + fmt.Sprintf(title, limit)}
	ra, rb := rep.row(a), rep.row(b)
	switch {
	case ra == nil || rb == nil:
		g.detail = fmt.Sprintf("`%s` or `%s` not measured.", a, b)
	case ra.stats().ok == 0 || ra.stats().failed > 0:
		g.detail = fmt.Sprintf("`%s` failed: %s.", a, errText(ra.stats().firstErr))
	case rb.stats().ok == 0 || rb.stats().failed > 0:
		g.detail = fmt.Sprintf("`%s` failed: %s.", b, errText(rb.stats().firstErr))
	default:
		sa, sb := ra.stats(), rb.stats()
		x := wallRatio(sa.wall, sb.wall)
		g.ok = sb.wall > 0 && x <= limit
		g.detail = fmt.Sprintf("`%s` %s vs `%s` %s: **%.2f×** (medians).", a, fmtWall(sa.wall), b, fmtWall(sb.wall), x)
	}
	return g
}

// section renders the case for RESULTS.md.
func (rep *scReport) section(ctx context.Context) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	size, entries := byteSize(rep.size), rep.entries
	w("<!-- build-case:%s:begin -->\n", servercoreCase)
	w("## %s: A Windows build on a servercore-scale base (%s, %s entries): imgctl build against buildctl\n\n",
		servercoreCase, size.String(), thousands(int64(entries)))
	var vs []string
	for _, r := range rep.rows {
		if v := fmt.Sprintf("%s %s", r.tool.Name(), r.tool.Version()); !slices.Contains(vs, v) {
			vs = append(vs, v)
		}
	}
	w("Measured on %s: %s %s/%s, nproc %s; %s; median of %d runs per row.\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.Version(), runtime.GOOS, runtime.GOARCH, nproc(ctx),
		strings.Join(vs, ", "), rep.runs)
	w("**Sizes used:** `-servercore-size %s -servercore-entries %d` (the issue's scale is 2GiB and 100,000). The base "+
		"`%s` is servercore-shaped: windows/amd64, os.version %s, %d layers of %s bytes compressed in all, in the Windows "+
		"layout (the `Hives` and `Files` roots, registry hives under `Hives/` and `Files/Windows/System32/config/`, DLLs in "+
		"`Files/Windows/WinSxS/` component directories, every entry in PAX format with MSWINDOWS records) with hard links "+
		"(tar TypeLink entries under `Files/Windows/System32/` to WinSxS files of the same layer): %s. File contents are "+
		"random (ChaCha8), so they do not compress; the layers were written with gzip Huffman-only (the fastest level) "+
		"to files on disk in %s and pushed from there in %s.\n\n",
		size.String(), entries, hostRE.ReplaceAllString(rep.base.ref, "HOST"), regtest.OSVersionLTSC2025, len(rep.base.layers),
		thousands(descSize(rep.base)), rep.layers, fmtWall(rep.genTime), fmtWall(rep.pushTime))
	w("### Method\n\n")
	w("The CNCF distribution registry (bin/registry, htpasswd auth) behind the bench's counting proxy holds the bases " +
		"and the targets. The Dockerfile is the cold case's Windows stage (`FROM ${WINDOWS_BASE}`, `COPY app.exe " +
		"/app/app.exe`, `ENTRYPOINT`), built with the cold case's command lines (`--provenance=false`, `--no-verify`). " +
		"**Every run of a build starts a fresh buildkitd** (new state directory) that has never pulled anything, and " +
		"every imgctl run starts with an empty local skeleton cache: the row's private `$HOME/.cache/imgctl` is removed " +
		"first (the tool runs with HOME set to a private directory and no XDG_CACHE_HOME, so os.UserCacheDir is " +
		"`$HOME/.cache`). The order of the rows rotates from run to run. What was cached where, per row:\n\n")
	for _, r := range rep.rows {
		w("- `%s`: %s.", r.name, r.cached)
		if r.kind == scRegistryRow {
			w(" R is `%s`; tags in R after the warm-up besides its own: %s; the skeletons they hold: %d bytes.", hostRE.ReplaceAllString(scRepo("HOST", r, 0), "HOST"), tagList(r.warmTags), r.skeletonBytes)
			if s := r.stats(); s.ok > 0 && s.read > 0 {
				w(" In this run its imgctl still read %s base bytes per run (median): no skeleton came from the registry.", thousands(s.read))
			} else if s.ok > 0 {
				w(" In this run its imgctl read no base layer bytes.")
			}
		}
		if r.kind == scReadBase {
			w(" Each base layer in turn: `crane --insecure blob HOST/bases/servercore@DIGEST | gzip -dc > /dev/null`; " +
				"the client RSS is crane's.")
		}
		if r.cold {
			w(" The base is `%s`: one layer of %s bytes.", hostRE.ReplaceAllString(rep.cold.ref, "HOST"), thousands(descSize(rep.cold)))
		}
		w("\n")
	}
	w("\nWall is the median of the runs (the build's child process, or the crane | gzip pipelines) with the fastest and "+
		"slowest run. Client peak RSS is the highest rusage Maxrss of the imgctl, buildctl or crane process over the runs "+
		"(%s); "+
		"buildkitd peak RSS the highest VmHWM of the run's buildkitd, read from /proc right before it is stopped. Base "+
		"bytes are medians, counted as in `%s`: down = the base's layer blobs served to the builder (by its User-Agent), "+
		"read = served to anyone else (imgctl making skeletons, crane), up = uploaded in sessions closed with a base layer's "+
		"digest. Requests are every registry request during the run.\n\n", rep.floorNote(), coldCase)
	t := newTable("row", "wall:", "wall min–max:", "client peak RSS:", "buildkitd peak RSS:", "base bytes down (builder):", "base bytes read (client):",
		"base bytes up:", "other blob bytes up:", "mounts:", "GET:", "HEAD:", "PUT:", "POST:", "PATCH:", "requests:")
	for _, r := range rep.rows {
		s := r.stats()
		if s.ok == 0 {
			t.row(mdEscape(r.name), "failed: "+mdEscape(errText(s.firstErr)))
			continue
		}
		daemon := "—"
		if r.kind != scReadBase {
			daemon = fmtKiB(s.daemonKiB)
			if s.daemonUnknown {
				daemon += " (some runs unread)"
			}
		}
		t.row(mdEscape(r.name), fmtWall(s.wall), fmtWall(s.wallLo)+"–"+fmtWall(s.wallHi), r.fmtClient(s.clientKiB), daemon,
			thousands(s.down), thousands(s.read), thousands(s.up), thousands(s.otherUp), s.mounts,
			s.get, s.head, s.put, s.post, s.patch, bold(s.reqs))
	}
	w("%s\n", t)
	for _, r := range rep.rows {
		if s := r.stats(); s.failed > 0 && s.ok > 0 {
			w("- %s failed %d of %d runs; first error: %s\n", r.name, s.failed, len(r.runs), mdEscape(errText(s.firstErr)))
		}
	}
	w("- **Results** (each build row's first result read back after the runs, compared as in `%s`):\n", coldCase)
	var ref *scRow
	for _, r := range rep.rows {
		switch {
		case r.kind == scReadBase:
		case r.ref == "":
			w("  - %s: no result to read\n", r.name)
		case r.readErr != nil:
			w("  - %s: reading %s: %s\n", r.name, hostRE.ReplaceAllString(r.ref, "HOST"), mdEscape(r.readErr.Error()))
		case !r.baseKept:
			w("  - %s: **the image does not list the base's layers unchanged first**\n", r.name)
		case ref == nil:
			ref = r
			w("  - %s: the base's layers unchanged, then %d own entries: %s\n", r.name, len(r.entries), coldEntryNames(r.entries))
		case slices.Equal(r.entries, ref.entries):
			w("  - %s: the base's layers unchanged; own entries **identical** to %s's\n", r.name, ref.name)
		default:
			w("  - %s: **own entries differ** from %s's: %s\n", r.name, ref.name, mdEscape(strings.Join(r.entries, "; ")))
		}
	}
	w("\n### Goals\n\n")
	w("%s", goalList(rep.goals()))
	w("\n<!-- build-case:%s:end -->\n", servercoreCase)
	return b.String()
}

// floorNote says how much of a client's Maxrss may be the bench's own
// memory (see peakRSS).
func (rep *scReport) floorNote() string {
	var floor int64
	var err error
	for _, r := range rep.rows {
		floor = max(floor, r.rss.floorKiB)
		if err == nil {
			err = r.rss.floorErr
		}
	}
	if err != nil {
		return "Linux counts the parent's peak RSS in a child started with vfork semantics, and resetting the bench's " +
			"failed (" + err.Error() + "): the figures may be the bench's own"
	}
	return fmt.Sprintf("Linux counts the memory a child shares with its parent until its exec in the child's Maxrss: "+
		"the bench resets its own peak before starting each child, so a figure below the bench's RSS at that moment, "+
		"at most %s in this run, is that RSS", fmtKiB(floor))
}

// descSize is the compressed size of a base's layers.
func descSize(b scBase) int64 {
	var n int64
	for _, l := range b.layers {
		n += l.Size
	}
	return n
}

// tagList formats tags for the report.
func tagList(tags []string) string {
	if len(tags) == 0 {
		return "none"
	}
	var q []string
	for _, t := range tags {
		q = append(q, "`"+t+"`")
	}
	return strings.Join(q, ", ")
}
