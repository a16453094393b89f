package main

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/imgctl/imgctl/internal/testing/mcrtest"
)

// plReport renders the bases-patchlevel case.
type plReport struct {
	check, bases, crane plRow
	// behind is each Windows variant's revisions_behind from the report.
	behind []string
	now    time.Time // zero: time.Now()
}

// revisionsBehind reads "PLATFORM: N" for each variant with a patch level
// from bases -o json.
func revisionsBehind(out string) []string {
	var rep struct {
		Variants []struct {
			Platform   string `json:"platform"`
			PatchLevel *struct {
				RevisionsBehind *int `json:"revisions_behind"`
			} `json:"patch_level"`
		} `json:"variants"`
	}
	if json.Unmarshal([]byte(out), &rep) != nil {
		return nil
	}
	var ss []string
	for _, v := range rep.Variants {
		if v.PatchLevel != nil && v.PatchLevel.RevisionsBehind != nil {
			ss = append(ss, fmt.Sprintf("%s: %d", v.Platform, *v.PatchLevel.RevisionsBehind))
		}
	}
	return ss
}

// bound is the limit: the staleness check's requests, one tag
// list per base repository and 3 reads per newer revision.
func (rep *plReport) bound() int { return rep.check.requests + plRepos + 3*plNewer*plBuilds }

func (rep *plReport) section(ctx context.Context) string {
	now := rep.now
	if now.IsZero() {
		now = time.Now()
	}
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("<!-- build-case:%s:begin -->\n", patchlevelCase)
	w("## %s: The patch-level report of `imgctl bases --at` against its request bound and a crane loop\n\n", patchlevelCase)
	w("Measured on %s: %s %s/%s, nproc %s; one run per row.\n\n", now.UTC().Format("2006-01-02 15:04 MST"),
		runtime.Version(), runtime.GOOS, runtime.GOARCH, nproc(ctx))
	w("### Method\n\n")
	w("- **Registry**: the CNCF distribution registry (bin/registry, htpasswd) behind the bench's counting proxy.\n")
	w("- **Base**: `HOST/%s` laid out like MCR's (internal/testing/mcrtest, the fixture of the patch-level e2e tests): "+
		"monthly revisions of builds 20348 and 26100 from October 2025 to November 2026 (created 5 days before each Patch "+
		"Tuesday), an out-of-band revision of each in May 2026, three revisions of build 17763; every revision under "+
		"`10.0.BUILD.REV` (an index) and its `-amd64` twin (the image); `ltsc2022` and `ltsc2025` at November's.\n", mcrtest.Nanoserver)
	w("- **Image**: `HOST/app:dec`, an index of two Windows variants on December 2025's revisions (%s, %s), with "+
		"BuildKit's base annotations (the moving tag and the revision's index digest): %d newer revisions of each build, "+
		"%d in all, on `--at %s`.\n", plV2022, plV2025, plNewer, plNewer*plBuilds, plAt)
	w("- **Bound** (issue 38): the staleness check's requests + %d tag list per base repository + 3 reads (the tag's "+
		"index, its image manifest, its config) per newer revision.\n\n", plRepos)
	w("### Results\n\n")
	t := newTable("row", "what runs", "requests:", "wall:")
	for _, r := range []plRow{rep.check, rep.bases, rep.crane} {
		if r.err != nil {
			t.row(r.name, r.how, "failed: "+mdEscape(r.err.Error()))
			continue
		}
		t.row(r.name, r.how, bold(r.requests), fmtWall(r.wall))
	}
	t.row("bound", fmt.Sprintf("%d + %d + 3 × %d", rep.check.requests, plRepos, plNewer*plBuilds), fmt.Sprintf("%d", rep.bound()), "")
	w("%s\n", t)
	if len(rep.behind) > 0 {
		w("The report's revisions behind: %s.\n\n", strings.Join(rep.behind, "; "))
	}
	w("### Goals\n\n")
	w("%s", goalList(rep.goals()))
	w("\n<!-- build-case:%s:end -->\n", patchlevelCase)
	return b.String()
}

func (rep *plReport) goals() []goal {
	if rep.check.err != nil || rep.bases.err != nil {
		return []goal{{title: patchlevelCase + " measured", detail: fmt.Sprintf("staleness check: %v; bases: %v", rep.check.err, rep.bases.err)}}
	}
	g := goal{ok: rep.bases.requests <= rep.bound(), title: "bases-patchlevel: the patch-level report stays within its request bound",
		detail: fmt.Sprintf("%d requests, bound %d (%d + %d + 3 × %d)", rep.bases.requests, rep.bound(), rep.check.requests, plRepos, plNewer*plBuilds)}
	if rep.crane.err == nil {
		g.detail += fmt.Sprintf("; crane by hand %d", rep.crane.requests)
	} else {
		g.detail += "; crane by hand failed: " + rep.crane.err.Error()
	}
	g.detail += "."
	return []goal{g}
}
