package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/imgctl/imgctl/fleet"
	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/rebase"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/sign"
	"github.com/imgctl/imgctl/verify"
)

// patchOptions are the flags of patch.
type patchOptions struct {
	file, key, format, policy, signed      string
	shard, suffix, template, builderID, at string
	bases, targets, merge                  []string
	jobs                                   int
	dryRun, allowBuildChange               bool
}

func newPatchCmd(ro *rootOptions) *cobra.Command {
	o := &patchOptions{}
	cmd := &cobra.Command{
		Use:   "patch [REF...] [-f FILE]",
		Short: "Rebase, verify, sign and promote every stale image of a list of release tags",
		Long: `patch is the monthly job for a fleet: for each release reference (arguments,
-f FILE with one per line and # comments, or -f - for standard input) it
decides whether any base moved, as imgctl bases does, and leaves a current
image alone. A stale one it rebases (imgctl rebase) to a staging tag in the
release repository, imgctl-stage-<hash of the source digest and the new
tag>, verifies it (--policy), signs it (--key), and promotes it (imgctl
promote, which verifies it again, signature included) to the next free
release tag: a semantic version 1.4.2 becomes 1.4.3 (or the next patch not
taken), any other tag gets --suffix and a number (latest → latest-r1), and
--tag-template covers the rest. No tag is ever overwritten, and nothing
reaches a release tag unverified.

The promoted index carries the annotation ` + fleet.AnnotationSource + ` with
the source digest. A rerun (after a crash, or next month with the same list)
reads the release repository's tags, finds an earlier promotion of the same
source and follows it: no source is promoted twice. Its digests are the same:
the rebase is a function of the source, the bases and the release tag.

Images are worked on --jobs at a time over one registry client: each base
is resolved and its config read once per run, layers are mounted, and a
registry's 429 or 503 with Retry-After slows every worker. One image's
failure does not stop the others. Each Windows variant's report says how far
behind its base revision was (as imgctl bases --at does: revisions and Patch
Tuesdays behind, the fix's age, the lifecycle phase), each base repository's
tags and revisions read once per run. --shard I/N takes a part of the list
that depends on each reference alone; --merge-reports joins the shards'
-o json reports. Exit 0 when every image is current or promoted, 1 when
some image failed a check (its policy), 2 on errors.`,
		Example: `  COSIGN_PASSWORD=... imgctl patch -f releases.txt --key cosign.key --policy policy.yaml
  imgctl patch reg.example.com/app:1.4.2 reg.example.com/web:latest --dry-run
  imgctl patch -f releases.txt --shard 2/4 --key cosign.key -o json > shard-2.json
  imgctl patch --merge-reports shard-1.json,shard-2.json,shard-3.json,shard-4.json`,
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, ro, args) },
	}
	fl := cmd.Flags()
	fl.StringVarP(&o.file, "file", "f", "", "file of release references, one per line, # comments (- for standard input)")
	fl.StringVar(&o.key, "key", "", "encrypted cosign private key to sign each rebased index with (password from COSIGN_PASSWORD); its public key joins the policy's")
	fl.StringVar(&o.format, "format", string(sign.DefaultFormat), "signature format: legacy, bundle or both (see imgctl sign)")
	fl.StringVar(&o.policy, "policy", "", "policy file each rebased index must pass (see imgctl verify)")
	fl.StringVar(&o.signed, "signed", "reference", "what is signed and checked: reference (the index) or all (every image too)")
	fl.StringVar(&o.shard, "shard", "", "work on part I of N of the list (I/N, from 1/N), by a hash of each reference")
	fl.StringVar(&o.suffix, "suffix", fleet.DefaultSuffix, "what a tag that is not MAJOR.MINOR.PATCH gets, with a number")
	fl.StringVar(&o.template, "tag-template", "", "Go template of the new tag, with .Tag and .N (e.g. {{.Tag}}-patch{{.N}}); replaces the semver and suffix rules")
	fl.StringSliceVar(&o.bases, "base", nil, "base per OS for variants without base annotations: windows=REF,linux=REF")
	addWindowsTargetsFlag(fl, &o.targets, "the builds of each rebased index")
	addJobsFlag(fl, &o.jobs, jobsImages)
	addDryRunFlag(fl, &o.dryRun, "each image's plan (outcome, new tag and digests)")
	addAtFlag(fl, &o.at, "each image's patch level and the policy's patchLevel limits are taken on")
	fl.BoolVar(&o.allowBuildChange, "allow-build-change", false, "let a Windows variant move to a base of another build")
	fl.StringVar(&o.builderID, "builder-id", "", "runDetails.builder.id of the rebase provenance (default "+rebase.DefaultBuilderID+")")
	fl.StringSliceVar(&o.merge, "merge-reports", nil, "merge these -o json reports (of --shard runs) into one and exit; no registry is read")
	return cmd
}

// run runs the verb with the parsed flags.
func (o *patchOptions) run(cmd *cobra.Command, ro *rootOptions, args []string) error {
	if len(o.merge) > 0 {
		if len(args) > 0 || o.file != "" {
			return fmt.Errorf("%w: --merge-reports takes no references", ErrUsage)
		}
		return o.mergeReports(cmd, ro)
	}
	rc := ro.registry(registry.WithJobs(o.jobs))
	fo, err := o.options(cmd, ro, rc)
	if err != nil {
		return err
	}
	shard, err := fleet.ParseShard(o.shard)
	if err != nil {
		return fmt.Errorf("%w: --shard: %w", ErrUsage, err)
	}
	refs, err := o.references(cmd, rc, args, shard)
	if err != nil {
		return err
	}
	out := newPatchWriter(cmd.OutOrStdout(), ro.output)
	if f, ok := cmd.ErrOrStderr().(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fo.Progress = func(done, total int) { fmt.Fprintf(f, "\r%d of %d done", done, total) }
	}
	if err := out.begin(); err != nil {
		return err
	}
	sum, err := fleet.Run(cmd.Context(), refs, fo, out.image)
	if fo.Progress != nil {
		fmt.Fprintln(cmd.ErrOrStderr())
	}
	if err != nil {
		return err
	}
	sum.Shard = shard.String()
	if err := out.end(sum); err != nil {
		return err
	}
	summarizePatch(ro.githubOutput(cmd), out.rows, sum)
	return patchExit(sum)
}

// patchExit maps a summary to the exit code: 2 when an image failed with
// an error, 1 when one failed a check, else 0.
func patchExit(sum fleet.Summary) error {
	switch {
	case sum.Errors > 0:
		return fmt.Errorf("%d of %d image(s) failed with an error", sum.Errors, sum.Total)
	case sum.Checks > 0:
		return fmt.Errorf("%d of %d image(s) failed a check: %w", sum.Checks, sum.Total, ErrCheckFailed)
	}
	return nil
}

// options builds the library options from the flags: the rebase template,
// the gate with the signer's public key, the signer and the tag rule.
func (o *patchOptions) options(cmd *cobra.Command, ro *rootOptions, rc *registry.Client) (fleet.Options, error) {
	lo, err := rebaseLibOptions(cmd, ro, rc, o.bases)
	if err != nil {
		return fleet.Options{}, err
	}
	lo.AllowBuildChange, lo.Version, lo.BuilderID = o.allowBuildChange, imgctlVersion(), o.builderID
	if lo.SourceDateEpoch, err = sourceDateEpoch(); err != nil {
		return fleet.Options{}, err
	}
	fo := fleet.Options{Registry: rc, Rebase: lo, Jobs: o.jobs, DryRun: o.dryRun, Logger: ro.logger(cmd)}
	if fo.Tags, err = fleet.NewTagRule(o.suffix, o.template); err != nil {
		return fleet.Options{}, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	if fo.Format, err = sign.ParseFormat(o.format); err != nil {
		return fleet.Options{}, fmt.Errorf("%w: --format: %w", ErrUsage, err)
	}
	targets, err := platform.ParseTargets(splitList(o.targets))
	if err != nil {
		return fleet.Options{}, fmt.Errorf("%w: --windows: %w", ErrUsage, err)
	}
	if fo.At, err = parseAt(o.at); err != nil {
		return fleet.Options{}, err
	}
	gf := gateFlags{policy: o.policy, signed: o.signed, at: o.at}
	if fo.Gate, err = gf.gate(verify.Options{Targets: targets}); err != nil {
		return fleet.Options{}, err
	}
	if o.key != "" {
		if fo.Signer, err = loadSigner(cmd, o.key); err != nil {
			return fleet.Options{}, err
		}
		fo.Gate.Keys = append(fo.Gate.Keys, sign.Key{Name: o.key, Verifier: fo.Signer})
	}
	if fo.Gate.Signed == sign.ScopeAll && o.key == "" && len(fo.Gate.Keys) == 0 {
		return fleet.Options{}, fmt.Errorf("%w: --signed all needs --key", ErrUsage)
	}
	return fo, nil
}

// loadSigner reads an encrypted cosign private key.
func loadSigner(cmd *cobra.Command, path string) (signature.SignerVerifier, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading private key: %w", err)
	}
	pw, err := password(cmd, false)
	if err != nil {
		return nil, err
	}
	s, err := sign.LoadPrivateKey(pem, pw)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", path, err)
	}
	return s, nil
}

// references reads the release references from the arguments and the
// file, and keeps those of the shard.
func (o *patchOptions) references(cmd *cobra.Command, rc *registry.Client, args []string, shard fleet.Shard) ([]name.Reference, error) {
	lines := args
	if o.file != "" {
		var r io.Reader
		if o.file == "-" {
			r = cmd.InOrStdin()
		} else {
			f, err := os.Open(o.file)
			if err != nil {
				return nil, fmt.Errorf("%w: --file: %w", ErrUsage, err)
			}
			defer f.Close()
			r = f
		}
		more, err := readReferences(r)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", o.file, err)
		}
		lines = append(lines, more...)
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("%w: no release references: give them as arguments or with -f FILE", ErrUsage)
	}
	var refs []name.Reference
	for _, l := range lines {
		ref, err := rc.ParseReference(l)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrUsage, err)
		}
		if _, ok := ref.(name.Tag); !ok {
			return nil, fmt.Errorf("%w: %s: %w", ErrUsage, l, fleet.ErrNotATag)
		}
		if shard.Has(ref.String()) {
			refs = append(refs, ref)
		}
	}
	return refs, nil
}

// readReferences reads one reference per line; blank lines and # comments
// (whole lines or after a reference) are skipped.
func readReferences(r io.Reader) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		l, _, _ := strings.Cut(sc.Text(), "#")
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out, sc.Err()
}
