package cli

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/spf13/cobra"

	idx "github.com/imgctl/imgctl/index"
	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/verify"
)

// indexOptions are the flags of index create and index remove.
type indexOptions struct {
	prefer                                string
	tags, annotations, targets, platforms []string
	noAttestations, force, dryRun         bool
	noVerify                              bool
	jobs                                  int
}

func newIndexCmd(ro *rootOptions) *cobra.Command {
	cmd := &cobra.Command{Use: "index", Short: "Merge images into one index, or remove variants from an index"}
	cmd.AddCommand(newIndexSubCmd(ro, false), newIndexSubCmd(ro, true))
	return cmd
}

// newIndexSubCmd builds index create, or index remove when remove is set.
func newIndexSubCmd(ro *rootOptions, remove bool) *cobra.Command {
	o := &indexOptions{}
	cmd := &cobra.Command{
		Use:   "create -t TAG SRC...",
		Short: "Merge images and indexes into one index, keeping os.version, annotations and attestations",
		Long: `create merges images and indexes from any repository or registry into one index
at TAG, keeping os.version, annotations and attestations. Exit 1 when verify fails.`,
		Example: `  imgctl index create -t reg.example.com/app:1.0 reg.example.com/app:linux reg.example.com/app:ltsc2025`,
		Args:    cobra.MinimumNArgs(1),
	}
	if remove {
		cmd.Use, cmd.Args, cmd.Long = "remove -t TAG --platform P SRC", cobra.ExactArgs(1), ""
		cmd.Short = "Publish an index without the variants matching --platform and their attestations"
		cmd.Example = `  imgctl index remove -t reg.example.com/app:1.0-b --platform windows/amd64:10.0.17763 reg.example.com/app:1.0`
		cmd.Flags().StringSliceVar(&o.platforms, "platform", nil, "platforms to remove, os/arch[/variant][:os.version] (windows: the build is matched)")
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		drop, err := platform.ParseList(o.platforms)
		if remove && (err != nil || len(drop) == 0) {
			return fmt.Errorf("%w: --platform: want at least one valid platform (%v)", ErrUsage, err)
		}
		return o.run(cmd, ro, func(ctx context.Context, rc *registry.Client, t name.Tag, io idx.Options) (*idx.Result, error) {
			srcs := make([]name.Reference, len(args))
			for i, a := range args {
				var err error
				if srcs[i], err = rc.ParseReference(a); err != nil {
					return nil, fmt.Errorf("%w: %w", ErrUsage, err)
				}
			}
			if remove {
				return idx.Remove(ctx, t, srcs[0], drop, io)
			}
			return idx.Create(ctx, t, srcs, io)
		})
	}
	fl := cmd.Flags()
	fl.StringArrayVarP(&o.tags, "tag", "t", nil, "tag to push the index to, repeatable in one repository (required; never overwritten without --force)")
	fl.StringArrayVar(&o.annotations, "annotation", nil, "index annotation key=value, repeatable (e.g. org.opencontainers.image.version=1.0)")
	fl.BoolVar(&o.noAttestations, "no-attestations", false, "drop every attestation manifest")
	fl.StringVar(&o.prefer, "prefer", "", "resolve duplicate platforms: newest (default: refuse them)")
	addForceFlag(fl, &o.force)
	addDryRunFlag(fl, &o.dryRun, "the index")
	addNoVerifyFlag(fl, &o.noVerify)
	addWindowsTargetsFlag(fl, &o.targets, defaultTargets)
	renamedFlag(fl, "target", "windows")
	addJobsFlag(fl, &o.jobs, jobsTransfers)
	return cmd
}

func (o *indexOptions) run(cmd *cobra.Command, ro *rootOptions,
	do func(context.Context, *registry.Client, name.Tag, idx.Options) (*idx.Result, error),
) error {
	ctx, log, rc := cmd.Context(), ro.logger(cmd), ro.registry(registry.WithJobs(o.jobs))
	io, target, vo, err := o.options(rc)
	if err != nil {
		return err
	}
	io.Registry, io.Logger = rc, log
	res, err := do(ctx, rc, target, io)
	requests := rc.Requests()
	if err != nil {
		return err
	}
	for _, n := range res.Notes {
		fmt.Fprintf(cmd.ErrOrStderr(), "note: %s\n", n)
	}
	w := cmd.OutOrStdout()
	if o.dryRun {
		_, err := fmt.Fprintf(w, "%s\n", res.Raw)
		return err
	}
	var rep *verify.Report
	if !o.noVerify {
		if rep, err = verifyPushed(ctx, rc, res, vo); err != nil {
			return err
		}
	}
	if ro.output == "json" {
		err = writeJSON(w, map[string]any{"ref": res.Tag.String(), "tags": tagStrings(res.Tags), "digest": res.Digest.String(),
			"mediaType": res.Manifest.MediaType, "manifests": len(res.Manifest.Manifests), "pushed": res.Pushed,
			"copied": res.Copied, "present": res.Present, "notes": append([]string{}, res.Notes...),
			"requests": requests, "verify": rep})
	} else {
		fmt.Fprintln(w, res.Digest)
		if rep != nil {
			err = printReport(w, "text", rep)
		}
	}
	if err == nil && rep != nil && !rep.Passed {
		return ErrCheckFailed
	}
	return err
}

func (o *indexOptions) options(rc *registry.Client) (io idx.Options, t name.Tag, vo verify.Options, err error) {
	io = idx.Options{NoAttestations: o.noAttestations, Force: o.force, DryRun: o.dryRun, Jobs: o.jobs}
	if t, io.AlsoTags, err = parseTags(rc, o.tags); err != nil {
		return io, t, vo, err
	}
	if io.Prefer, err = idx.ParsePrefer(o.prefer); err != nil {
		return io, t, vo, fmt.Errorf("%w: --prefer: %w", ErrUsage, err)
	}
	if io.Annotations, err = keyValues("--annotation", o.annotations, false); err != nil {
		return io, t, vo, err
	}
	if vo.Targets, err = platform.ParseTargets(splitList(o.targets)); err != nil {
		return io, t, vo, fmt.Errorf("%w: --windows: %w", ErrUsage, err)
	}
	return io, t, vo, nil
}

// verifyPushed runs verify on the index just pushed.
func verifyPushed(ctx context.Context, rc *registry.Client, res *idx.Result, vo verify.Options) (*verify.Report, error) {
	_, snap, err := rc.Snapshot(ctx, res.Ref)
	if err != nil {
		return nil, fmt.Errorf("verifying %s: %w", res.Ref, err)
	}
	return verify.Evaluate(res.Tag.String(), snap, vo), nil
}
