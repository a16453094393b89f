package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/imgctl/imgctl/fleet"
	"github.com/imgctl/imgctl/internal/ghactions"
	"github.com/imgctl/imgctl/patchlevel"
)

// patchWriter streams patch's report: each image as it finishes, so that
// nothing of a finished image is held but its summary row.
type patchWriter struct {
	w    io.Writer
	json bool
	mu   sync.Mutex
	n    int
	rows [][]string // the step summary's rows, one short line per image
}

func newPatchWriter(w io.Writer, format string) *patchWriter {
	return &patchWriter{w: w, json: format == "json"}
}

// begin writes the report's head.
func (p *patchWriter) begin() error {
	if p.json {
		_, err := fmt.Fprintf(p.w, "{\"schema\":%q,\"images\":[\n", fleet.Schema)
		return err
	}
	return nil
}

// image writes one image's report.
func (p *patchWriter) image(im fleet.Image) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rows = append(p.rows, summaryRowOf(im))
	defer func() { p.n++ }()
	if p.json {
		b, err := json.Marshal(im)
		if err != nil {
			return err
		}
		sep := ",\n"
		if p.n == 0 {
			sep = ""
		}
		_, err = fmt.Fprintf(p.w, "%s%s", sep, b)
		return err
	}
	return writeImageText(p.w, im)
}

// end writes the summary and closes the report.
func (p *patchWriter) end(sum fleet.Summary) error {
	if p.json {
		b, err := json.Marshal(sum)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(p.w, "\n],\"summary\":%s}\n", b)
		return err
	}
	return writeSummaryText(p.w, sum)
}

// writeImageText writes one image: a line with its outcome, then one line
// per variant with its os.version and base before and after.
func writeImageText(w io.Writer, im fleet.Image) error {
	line := fmt.Sprintf("%-8s %s", im.Outcome, im.Ref)
	if im.Tag != "" {
		line += " -> " + im.Tag
	}
	if im.NewDigest != "" {
		line += " @" + shortDigest(im.NewDigest)
	}
	if im.Reason != "" {
		line += " (" + im.Reason + ")"
	}
	fmt.Fprintln(w, line)
	for _, v := range im.Variants {
		mark := "current"
		if v.Stale {
			mark = "stale"
		}
		fmt.Fprintf(w, "    %-32s %-8s %s %s -> %s %s%s\n", v.Platform, mark, dash(v.Before.OSVersion), shortDigest(v.Before.Base), dash(v.After.OSVersion), shortDigest(v.After.Base), behindText(v.PatchLevel))
	}
	for _, f := range im.Findings {
		fmt.Fprintf(w, "    %s: %s\n", f.Rule, f.Message)
	}
	return nil
}

// behindText is a Windows variant's patch level before the rebase, as
// bases words it (verdict, fix age, lifecycle); "" for Linux variants.
func behindText(pl *patchlevel.Variant) string {
	if pl == nil {
		return ""
	}
	verdict, _ := verdictOf(*pl)
	s := "  [" + verdict
	if pl.Status == patchlevel.StatusUnknown {
		s += ": " + pl.Reason
	}
	if pl.FixAvailableDays != nil {
		s += fmt.Sprintf(", fix available %d days", *pl.FixAvailableDays)
	}
	if l := pl.Lifecycle; l != nil {
		s += fmt.Sprintf(", %s %s until %s", pl.Release, l.Phase, l.Until)
	}
	return s + "]"
}

// writeSummaryText writes the counts.
func writeSummaryText(w io.Writer, s fleet.Summary) error {
	_, err := fmt.Fprintf(w, "%d image(s) (shard %s): %d current, %d promoted, %d failed (%d check, %d error), %d skipped; "+
		"%d base lookup(s), %d base config read(s), %d request(s)\n",
		s.Total, s.Shard, s.Current, s.Promoted, s.Failed, s.Checks, s.Errors, s.Skipped, s.BaseLookups, s.BaseConfigReads, s.Requests)
	return err
}

// summaryRowOf is an image's row in the step summary.
func summaryRowOf(im fleet.Image) []string {
	stale := 0
	for _, v := range im.Variants {
		if v.Stale {
			stale++
		}
	}
	why := im.Reason
	if len(why) > 200 {
		why = why[:200] + "…"
	}
	return []string{code(im.Ref), string(im.Outcome), fmt.Sprintf("%d of %d", stale, len(im.Variants)), intOr(im.PatchTuesdaysBehind), code(im.Tag), code(shortDigest(im.NewDigest)), why}
}

// summarizePatch appends the run's table to the GitHub step summary.
func summarizePatch(g githubOutput, rows [][]string, s fleet.Summary) {
	if !g.on {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### imgctl patch (shard %s)\n\n%d current, %d promoted, %d failed, %d skipped of %d image(s).\n\n",
		s.Shard, s.Current, s.Promoted, s.Failed, s.Skipped, s.Total)
	b.WriteString(ghactions.Table([]string{"image", "outcome", "stale variants", "Patch Tuesdays behind", "new tag", "digest", "reason"}, rows))
	g.appendSummary(b.String())
}

// mergeReports reads the shards' JSON reports and writes one: every image,
// and the counts added up.
func (o *patchOptions) mergeReports(cmd *cobra.Command, ro *rootOptions) error {
	merged := fleet.Report{Schema: fleet.Schema, Images: []fleet.Image{}}
	var shards []string
	for _, path := range splitList(o.merge) {
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("%w: --merge-reports: %w", ErrUsage, err)
		}
		var r fleet.Report
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrUsage, path, err)
		}
		if r.Schema != fleet.Schema {
			return fmt.Errorf("%w: %s: schema %q, want %q", ErrUsage, path, r.Schema, fleet.Schema)
		}
		if err := fleet.Merge(&merged, r); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrUsage, path, err)
		}
		shards = append(shards, r.Summary.Shard)
	}
	merged.Summary.Shard = strings.Join(shards, ",")
	out := newPatchWriter(cmd.OutOrStdout(), ro.output)
	if err := out.begin(); err != nil {
		return err
	}
	for _, im := range merged.Images {
		if err := out.image(im); err != nil {
			return err
		}
	}
	if err := out.end(merged.Summary); err != nil {
		return err
	}
	summarizePatch(ro.githubOutput(cmd), out.rows, merged.Summary)
	return patchExit(merged.Summary)
}
