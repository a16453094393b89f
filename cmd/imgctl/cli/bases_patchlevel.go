package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/term"

	"github.com/imgctl/imgctl/internal/ghactions"
	"github.com/imgctl/imgctl/patchlevel"
	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/rebase"
	"github.com/imgctl/imgctl/registry"
)

// basesReport is the JSON shape of `imgctl bases -o json`: the base
// status, each variant with its Windows patch level inline, and the
// report's date.
type basesReport struct {
	*rebase.Status
	// At is the report's date (--at).
	At platform.Date `json:"at"`
	// Variants shadows Status.Variants: each with its patch level.
	Variants []basesVariant `json:"variants"`
	// PatchLevel is the report of the Windows variants, in index order.
	PatchLevel []patchlevel.Variant `json:"-"`
}

// basesVariant is one variant of bases -o json.
type basesVariant struct {
	rebase.Variant
	// PatchLevel is set for Windows variants.
	PatchLevel *patchlevel.Variant `json:"patch_level,omitempty"`
	// OldBaseCreated and NewBaseCreated are the config created dates of
	// OldBaseImage and NewBaseImage, for Linux variants (a Windows
	// variant's date is its patch level's published). BaseCreatedReason
	// says why one could not be read.
	OldBaseCreated    *time.Time `json:"old_base_created,omitempty"`
	NewBaseCreated    *time.Time `json:"new_base_created,omitempty"`
	BaseCreatedReason string     `json:"base_created_reason,omitempty"`
}

// parseAt reads --at; "" is today (UTC).
func parseAt(s string) (platform.Date, error) {
	if s == "" {
		return platform.Date{}, nil
	}
	d, err := platform.ParseDate(s)
	if err != nil {
		return d, fmt.Errorf("%w: --at: %w", ErrUsage, err)
	}
	return d, nil
}

// basesPatchLevel reports the patch level of the Windows variants of st.
func basesPatchLevel(ctx context.Context, rc *registry.Client, st *rebase.Status, at platform.Date) (*basesReport, error) {
	o := patchlevel.Options{Registry: rc, At: at}
	o.At = o.Date()
	levels, err := patchlevel.CheckRefs(ctx, statusRefs(st.Variants), o, rc.NameOptions()...)
	if err != nil {
		return nil, err
	}
	rep := &basesReport{Status: st, At: o.At}
	for i, v := range st.Variants {
		rep.Variants = append(rep.Variants, basesVariant{Variant: v, PatchLevel: levels[i]})
		if levels[i] != nil {
			rep.PatchLevel = append(rep.PatchLevel, *levels[i])
		}
	}
	linuxBaseCreated(ctx, rc, rep.Variants)
	return rep, ctx.Err()
}

// statusRefs names the variants of a status for patchlevel.CheckRefs.
func statusRefs(vs []rebase.Variant) []patchlevel.Ref {
	refs := make([]patchlevel.Ref, len(vs))
	for i, v := range vs {
		refs[i] = patchlevel.Ref{Platform: v.Platform, Digest: v.Digest, Base: v.BaseName}
	}
	return refs
}

// linuxBaseCreated fills the created dates of the recorded and current
// base images of the Linux variants (two reads each, once per digest in
// the run); a date that cannot be read is reported with the reason.
func linuxBaseCreated(ctx context.Context, rc *registry.Client, vs []basesVariant) {
	type result struct {
		t   *time.Time
		err error
	}
	seen := map[string]result{}
	read := func(base, digest string) (*time.Time, error) {
		if digest == "" {
			return nil, nil
		}
		key := base + "@" + digest
		if r, ok := seen[key]; ok {
			return r.t, r.err
		}
		ref, err := rc.ParseReference(base)
		var r result
		if err == nil {
			var t time.Time
			t, err = patchlevel.ImageCreated(ctx, rc, ref.Context().Digest(digest))
			if err == nil {
				r.t = &t
			}
		}
		r.err = err
		seen[key] = r
		return r.t, r.err
	}
	for i := range vs {
		v := &vs[i]
		if v.PatchLevel != nil || v.BaseName == "" {
			continue
		}
		p, err := platform.Parse(v.Platform)
		if err != nil || platform.Normalize(p).OS == "windows" {
			continue
		}
		var errs []string
		var err1, err2 error
		v.OldBaseCreated, err1 = read(v.BaseName, v.OldBaseImage)
		v.NewBaseCreated, err2 = read(v.BaseName, v.NewBaseImage)
		for _, err := range []error{err1, err2} {
			if err != nil {
				errs = append(errs, err.Error())
			}
		}
		switch {
		case len(errs) > 0:
			v.BaseCreatedReason = strings.Join(errs, "; ")
		case v.OldBaseImage == "":
			v.BaseCreatedReason = "no base digest is recorded"
		}
	}
}

// printLinuxBases writes one row per Linux variant with a base: the
// created dates of its recorded and current base images.
func printLinuxBases(w io.Writer, vs []basesVariant) error {
	rows := linuxBaseRows(vs)
	if len(rows) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PLATFORM\tBASE CREATED\tNEW BASE CREATED\tNOTE")
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// linuxBaseRows are the Linux variants' cells, in the text table and the
// step summary.
func linuxBaseRows(vs []basesVariant) [][]string {
	var rows [][]string
	date := func(t *time.Time) string {
		if t == nil {
			return "-"
		}
		return platform.DateOf(*t).String()
	}
	for _, v := range vs {
		if v.OldBaseCreated == nil && v.NewBaseCreated == nil && v.BaseCreatedReason == "" {
			continue
		}
		rows = append(rows, []string{v.Platform, date(v.OldBaseCreated), date(v.NewBaseCreated), dash(v.BaseCreatedReason)})
	}
	return rows
}

// useColour reports whether w is a terminal that takes colour: a
// character device, and NO_COLOR unset (https://no-color.org).
func useColour(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && os.Getenv("NO_COLOR") == "" && term.IsTerminal(int(f.Fd()))
}

// ANSI colours of the patch-level verdict.
const (
	ansiRed    = "\x1b[31m"
	ansiYellow = "\x1b[33m"
	ansiGreen  = "\x1b[32m"
	ansiReset  = "\x1b[0m"
)

// printPatchLevel writes one row per Windows variant; the verdict, the
// last column, is coloured on a terminal (red: support ended, or a fix
// older than a Patch Tuesday; yellow: behind, or extended support; green:
// current).
func printPatchLevel(w io.Writer, vs []patchlevel.Variant, colour bool) error {
	if len(vs) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PLATFORM\tRELEASE\tREVISION\tPUBLISHED\tNEWEST\tBEHIND\tPATCH TUESDAYS\tFIX AVAILABLE\tLIFECYCLE\tVERDICT")
	for _, v := range vs {
		row := patchRow(v)
		verdict, c := verdictOf(v)
		if colour && c != "" {
			verdict = c + verdict + ansiReset
		}
		for _, cell := range row {
			fmt.Fprintf(tw, "%s\t", cell)
		}
		fmt.Fprintln(tw, verdict)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, v := range vs {
		if v.Status == patchlevel.StatusUnknown {
			fmt.Fprintf(w, "note: %s: patch level unknown: %s\n", v.Platform, v.Reason)
		}
	}
	return nil
}

// patchRow is a variant's cells before the verdict, in the text table
// and in the step summary.
func patchRow(v patchlevel.Variant) []string {
	rev, published, newest := "-", "-", "-"
	if v.Build != 0 {
		rev = fmt.Sprintf("%d.%d", v.Build, v.Revision)
	}
	if v.Published != nil {
		published = platform.DateOf(*v.Published).String()
	}
	if v.Newest != nil {
		newest = fmt.Sprintf("%s (%s)", v.Newest.Version, platform.DateOf(v.Newest.Created))
	}
	fix := "-"
	if v.FixAvailableDays != nil {
		fix = fmt.Sprintf("%d days", *v.FixAvailableDays)
	}
	life := "-"
	if v.LifecycleReason != "" {
		life = "unknown"
	}
	if l := v.Lifecycle; l != nil {
		life = fmt.Sprintf("%s until %s", l.Phase, l.Until)
		if l.Phase == platform.PhaseEnded {
			life = fmt.Sprintf("ended %s", l.Until)
		}
	}
	return []string{v.Platform, v.Release, rev, published, newest, intOr(v.RevisionsBehind), intOr(v.PatchTuesdaysBehind), fix, life}
}

// verdictOf sums a variant up in a few words, with its colour.
func verdictOf(v patchlevel.Variant) (string, string) {
	switch {
	case v.Lifecycle != nil && v.Lifecycle.Phase == platform.PhaseEnded:
		return "out of support", ansiRed
	case v.Status == patchlevel.StatusUnknown:
		return "unknown", ansiYellow
	case v.Status == patchlevel.StatusBehind && *v.PatchTuesdaysBehind > 0:
		return fmt.Sprintf("%d Patch Tuesday(s) behind", *v.PatchTuesdaysBehind), ansiRed
	case v.Status == patchlevel.StatusBehind:
		return "behind (out-of-band)", ansiYellow
	case v.Lifecycle != nil && v.Lifecycle.Phase == platform.PhaseExtended:
		return "patched (extended support)", ansiYellow
	}
	return "patched", ansiGreen
}

func intOr(n *int) string {
	if n == nil {
		return "-"
	}
	return fmt.Sprint(*n)
}

// basesSummary is the step summary of bases: the patch-level table of the
// Windows variants, with the reasons of unknown ones.
func basesSummary(rep *basesReport) string {
	linux := ""
	if rows := linuxBaseRows(rep.Variants); len(rows) > 0 {
		linux = "\nLinux bases.\n\n" + ghactions.Table([]string{"Platform", "Base created", "New base created", "Note"}, rows)
	}
	if len(rep.PatchLevel) == 0 {
		if linux == "" {
			return ""
		}
		return fmt.Sprintf("### imgctl bases %s\n%s", code(rep.Ref), linux)
	}
	var rows [][]string
	for _, v := range rep.PatchLevel {
		verdict, _ := verdictOf(v)
		if v.Reason != "" {
			verdict += ": " + v.Reason
		}
		rows = append(rows, append(patchRow(v), verdict))
	}
	head := fmt.Sprintf("### imgctl bases %s\n\nWindows patch level on %s.\n\n", code(rep.Ref), rep.At)
	return head + ghactions.Table([]string{"Platform", "Release", "Revision", "Published", "Newest", "Behind", "Patch Tuesdays", "Fix available", "Lifecycle", "Verdict"}, rows) + linux
}
