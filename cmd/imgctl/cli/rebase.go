package cli

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/rebase"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/verify"
)

// rebaseOptions are the flags of rebase.
type rebaseOptions struct {
	tags, bases, targets     []string
	dryRun, allowBuildChange bool
	noVerify                 bool
	jobs                     int
	builderID                string
}

func newRebaseCmd(ro *rootOptions) *cobra.Command {
	o := &rebaseOptions{}
	cmd := &cobra.Command{
		Use:   "rebase REF -t NEWTAG",
		Short: "Move every variant of an index onto its base's current image, without a rebuild",
		Long: `rebase moves every stale variant of REF (see imgctl bases) onto its base's
current image and publishes the result as NEWTAG, which must not exist: base
layers are replaced, app layers and their descriptors kept, and the config's
diff_ids, history, os.version and os.features follow the new base, as does the
index descriptor. Layers are mounted across repositories, never read.

Each rebased variant gets a new attestation manifest (BuildKit's layout) with
imgctl's SLSA provenance v1: buildType ` + rebase.BuildType + `,
builder.id ` + rebase.DefaultBuilderID + ` (or --builder-id) with imgctl's
version, and as resolvedDependencies the source variant, the old and the new
base (name and digest) and the variant's old attestation manifests. Those leave
the index, with their subject, and are named by digest in REF's repository,
where REF's tag keeps them: keep that tag as long as the chain of provenance
matters. An old SBOM is not carried over: it lists the old base's packages,
and rebase reads no layer to list the new one's; rebuild with --sbom for a
current SBOM. Current variants keep their attestations.

A Windows variant never changes build without --allow-build-change. When every
variant is current, nothing is pushed; a repeated rebase onto the tag it
already wrote pushes nothing either. The output is a function of the inputs:
the provenance records the new base's creation time ($SOURCE_DATE_EPOCH, in
seconds, when set, as BuildKit reads it) and an id derived from the source,
the target and the digests, so the same rebase gives the same digests and
--dry-run gives the real run's. Exit 1 when verify fails on the result, 2 on
errors.`,
		Example: `  imgctl rebase registry.example.com/app:1.0 -t registry.example.com/app:1.0-2025-02
  imgctl rebase registry.example.com/app:1.0 -t registry.example.com/app:1.0-r2 --dry-run -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, ro, args[0]) },
	}
	fl := cmd.Flags()
	fl.StringArrayVarP(&o.tags, "tag", "t", nil, "tag to push the rebased index to, repeatable in one repository (required; never an existing tag)")
	fl.StringSliceVar(&o.bases, "base", nil, "base per OS for variants without base annotations: windows=REF,linux=REF")
	addDryRunFlag(fl, &o.dryRun, "the plan (old and new base digests and os.versions)")
	fl.BoolVar(&o.allowBuildChange, "allow-build-change", false, "let a Windows variant move to a base of another build")
	addNoVerifyFlag(fl, &o.noVerify)
	addWindowsTargetsFlag(fl, &o.targets, "the builds the rebased index has: rebase keeps each variant's build")
	renamedFlag(fl, "target", "windows")
	addJobsFlag(fl, &o.jobs, jobsTransfers)
	fl.StringVar(&o.builderID, "builder-id", "", "runDetails.builder.id of the provenance written for each rebased variant, e.g. your CI's URI (default "+rebase.DefaultBuilderID+")")
	return cmd
}

func (o *rebaseOptions) run(cmd *cobra.Command, ro *rootOptions, ref string) error {
	rc := ro.registry(registry.WithJobs(o.jobs))
	lo, err := rebaseLibOptions(cmd, ro, rc, o.bases)
	if err != nil {
		return err
	}
	lo.DryRun, lo.AllowBuildChange, lo.Jobs = o.dryRun, o.allowBuildChange, o.jobs
	lo.Version, lo.BuilderID = imgctlVersion(), o.builderID
	if lo.SourceDateEpoch, err = sourceDateEpoch(); err != nil {
		return err
	}
	src, err := rc.ParseReference(ref)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUsage, err)
	}
	target, also, err := parseTags(rc, o.tags)
	if err != nil {
		return err
	}
	lo.AlsoTags = also
	targets, err := platform.ParseTargets(splitList(o.targets))
	if err != nil {
		return fmt.Errorf("%w: --windows: %w", ErrUsage, err)
	}
	res, err := rebase.Rebase(cmd.Context(), src, target, lo)
	if err != nil {
		return err
	}
	noteDirectBases(cmd)
	for _, n := range res.Notes {
		fmt.Fprintf(cmd.ErrOrStderr(), "note: %s\n", n)
	}
	var rep *verify.Report
	if res.Index != nil && !o.dryRun && !o.noVerify {
		if len(targets) == 0 {
			targets = res.Targets()
		}
		rep = verify.Evaluate(target.String(), res.Snapshot(), verify.Options{Targets: targets})
	}
	if err := o.print(cmd.OutOrStdout(), ro.output, res, rep); err != nil {
		return err
	}
	o.summarize(ro.githubOutput(cmd), res, rep)
	if rep != nil && !rep.Passed {
		return ErrCheckFailed
	}
	return nil
}

// rebaseJSON is the -o json output: the source status with each variant's
// new digest, the new index and the verify report.
type rebaseJSON struct {
	*rebase.Result
	NewDigest string         `json:"new_digest,omitempty"`
	DryRun    bool           `json:"dry_run"`
	Verify    *verify.Report `json:"verify,omitempty"`
}

func (o *rebaseOptions) print(w io.Writer, format string, res *rebase.Result, rep *verify.Report) error {
	newDigest := ""
	if res.Index != nil {
		newDigest = res.Index.Digest.String()
	}
	if format == "json" {
		return writeJSON(w, rebaseJSON{Result: res, NewDigest: newDigest, DryRun: o.dryRun, Verify: rep})
	}
	switch {
	case res.Index == nil:
		_, err := fmt.Fprintf(w, "every variant of %s is current: nothing to push\n", res.Ref)
		return err
	case o.dryRun:
		fmt.Fprintf(w, "plan: %s -> %s@%s (dry run: nothing pushed)\n", res.Ref, strings.Join(res.Tags, ", "), newDigest)
		return printVariants(w, res.Variants, true)
	}
	fmt.Fprintln(w, newDigest)
	if !res.Pushed {
		fmt.Fprintf(w, "%s already points at this index: nothing pushed\n", res.Tag)
	}
	if rep != nil {
		return printReport(w, "text", rep)
	}
	return nil
}

// summarize appends the rebase to the GitHub step summary: what was
// pushed, the new index's platforms and verify's report of it.
func (o *rebaseOptions) summarize(g githubOutput, res *rebase.Result, rep *verify.Report) {
	var notes []string
	switch {
	case res.Index == nil:
		notes = append(notes, "Every variant is current: nothing pushed.")
	case o.dryRun:
		notes = append(notes, fmt.Sprintf("Dry run: %s would be %s; nothing pushed.", code(res.Tag), code(res.Index.Digest.String())))
	case !res.Pushed:
		notes = append(notes, fmt.Sprintf("%s already points at %s: nothing pushed.", code(res.Tag), code(res.Index.Digest.String())))
	default:
		notes = append(notes, fmt.Sprintf("Pushed %s at %s.", code(strings.Join(res.Tags, ", ")), code(res.Index.Digest.String())))
	}
	notes = append(notes, res.Notes...)
	g.verified(fmt.Sprintf("imgctl rebase %s → %s", code(res.Ref), code(res.Tag)), snapshotRows(res.Snapshot()), rep, notes...)
}

// sourceDateEpoch reads $SOURCE_DATE_EPOCH (seconds since 1970, as
// reproducible-builds.org defines it and BuildKit reads it): nil when unset
// or empty, a usage error when it is not a whole number of seconds.
func sourceDateEpoch() (*time.Time, error) {
	v := os.Getenv("SOURCE_DATE_EPOCH")
	if v == "" {
		return nil, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return nil, fmt.Errorf("%w: SOURCE_DATE_EPOCH=%q: want whole seconds since 1970", ErrUsage, v)
	}
	t := time.Unix(n, 0).UTC()
	return &t, nil
}
