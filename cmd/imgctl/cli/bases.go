package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/spf13/cobra"

	"github.com/imgctl/imgctl/rebase"
	"github.com/imgctl/imgctl/registry"
)

// basesOptions are the flags of bases.
type basesOptions struct {
	bases []string
	at    string
}

func newBasesCmd(ro *rootOptions) *cobra.Command {
	o := &basesOptions{}
	cmd := &cobra.Command{
		Use:   "bases REF",
		Short: "Report each variant's base image and whether the base has moved since",
		Long: `bases reads an index and, for each variant, its base image (from the
org.opencontainers.image.base.name and .base.digest annotations of the manifest
or of the index descriptor, else from --base for its OS), that base's current
image for the variant's platform (same OS and architecture and, for Windows,
the same build) and whether the variant is stale. It never reads a layer.

For each Windows variant it also reports the patch level: the release
(ltsc2016 to ltsc2025, a channel release such as 23H2, or unknown), build and revision, the
date its base revision was published (the base config's created), the
newest revision of the same build among the base repository's
10.0.BUILD.REV tags, how many revisions and Patch Tuesdays it is behind,
for how many days a fix has been available, and its lifecycle phase
(mainstream, extended, ended) on --at (default today, UTC). For each Linux
variant it reports the created dates of the recorded and current base images.

Exit 0 when every variant is current, 1 when any is stale, 2 on errors.`,
		Example: `  imgctl bases registry.example.com/app:1.0
  imgctl bases registry.example.com/app:1.0 --base windows=mcr.microsoft.com/windows/nanoserver:ltsc2025 -o json
  imgctl bases registry.example.com/app:1.0 --at 2026-11-12`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, ro, args) },
	}
	cmd.Flags().StringSliceVar(&o.bases, "base", nil, "base per OS for variants without base annotations: windows=REF,linux=REF")
	addAtFlag(cmd.Flags(), &o.at, "the report is taken on: Windows lifecycle phases, revisions published by then and fix-available days are as of that date")
	return cmd
}

// run runs the verb with the parsed flags.
func (o *basesOptions) run(cmd *cobra.Command, ro *rootOptions, args []string) error {
	at, err := parseAt(o.at)
	if err != nil {
		return err
	}
	rc := ro.registry()
	lo, err := rebaseLibOptions(cmd, ro, rc, o.bases)
	if err != nil {
		return err
	}
	src, err := rc.ParseReference(args[0])
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUsage, err)
	}
	st, err := rebase.Check(cmd.Context(), src, lo)
	if err != nil {
		return err
	}
	noteDirectBases(cmd)
	rep, err := basesPatchLevel(cmd.Context(), rc, st, at)
	if err != nil {
		return err
	}
	if err := printBases(cmd.OutOrStdout(), ro.output, rep); err != nil {
		return err
	}
	ro.githubOutput(cmd).appendSummary(basesSummary(rep))
	if st.Stale {
		return ErrCheckFailed
	}
	return nil
}

// noteDirectBases says on stderr that bases and rebase read the base
// images from their registries themselves: unlike build, which resolves
// bases through the builder (its mirrors, TLS and insecure settings), they
// need the bases' manifests and layer digests, which a builder does not
// hand out, so a base reachable only through a builder's mirror is not
// reachable here.
func noteDirectBases(cmd *cobra.Command) {
	fmt.Fprintln(cmd.ErrOrStderr(), "note: reading the base images from their registries directly, not through a builder's mirrors")
}

// rebaseLibOptions builds the rebase library options both commands share.
func rebaseLibOptions(cmd *cobra.Command, ro *rootOptions, rc *registry.Client, bases []string) (rebase.Options, error) {
	o := rebase.Options{Registry: rc, Logger: ro.logger(cmd)}
	for _, kv := range splitList(bases) {
		osName, s, ok := strings.Cut(kv, "=")
		if !ok || osName == "" || s == "" {
			return o, fmt.Errorf("%w: --base %q: want os=REF, e.g. windows=mcr.microsoft.com/windows/nanoserver:ltsc2025", ErrUsage, kv)
		}
		ref, err := rc.ParseReference(s)
		if err != nil {
			return o, fmt.Errorf("%w: --base: %w", ErrUsage, err)
		}
		if o.Bases == nil {
			o.Bases = map[string]name.Reference{}
		}
		o.Bases[strings.ToLower(osName)] = ref
	}
	return o, nil
}

// printBases writes the report as JSON, or as tables with a summary.
func printBases(w io.Writer, format string, rep *basesReport) error {
	if format == "json" {
		return writeJSON(w, rep)
	}
	st := rep.Status
	fmt.Fprintf(w, "%s@%s\n", st.Ref, st.Digest)
	if err := printVariants(w, st.Variants, false); err != nil {
		return err
	}
	if err := printLinuxBases(w, rep.Variants); err != nil {
		return err
	}
	if err := printPatchLevel(w, rep.PatchLevel, useColour(w)); err != nil {
		return err
	}
	n := 0
	for _, v := range st.Variants {
		if v.Stale {
			n++
		}
	}
	_, err := fmt.Fprintf(w, "%d of %d variant(s) stale\n", n, len(st.Variants))
	return err
}

// printVariants writes one row per variant: its base, the recorded and
// current base digests and os.versions, and its status (or, for a plan,
// the action).
func printVariants(w io.Writer, vs []rebase.Variant, plan bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	last := "STATUS"
	if plan {
		last = "ACTION"
	}
	fmt.Fprintf(tw, "PLATFORM\tBASE\tOLD BASE\tNEW BASE\tOLD OS.VERSION\tNEW OS.VERSION\t%s\n", last)
	for _, v := range vs {
		status := map[bool]string{true: "stale", false: "current"}[v.Stale]
		if plan {
			status = map[bool]string{true: "rebase", false: "keep"}[v.Stale]
		}
		if v.BuildChange {
			status += " (build change)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", v.Platform, v.BaseName, dash(shortDigest(v.OldBase)),
			shortDigest(v.NewBase), dash(v.OldOSVersion), dash(v.NewOSVersion), status)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, v := range vs {
		if v.Note != "" {
			fmt.Fprintf(w, "note: %s: %s\n", v.Platform, v.Note)
		}
	}
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
