package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/imgctl/imgctl/promote"
	"github.com/imgctl/imgctl/verify"
)

func newPromoteCmd(ro *rootOptions) *cobra.Command {
	o := &gateFlags{}
	cmd := &cobra.Command{
		Use:   "promote SRC DST",
		Short: "Verify an index against the policy and copy it, signatures and attestations included, to a release tag",
		Long: `promote resolves SRC to a digest once and verifies that digest: verify's
rules, the policy (--policy), and the cosign signatures of that digest (with
--signed all, of every child too) when the policy or --key names keys. When it passes, promote copies
exactly that digest to the tag DST, in the same or another registry: every
child by its exact bytes (blobs mounted within a registry), attestation
manifests included, the cosign .sig, .att and .sbom tags and the OCI
referrers (through the referrers API or its sha256-<digest> fallback tag) of
the index and of each child, and tags DST last, once the signatures and the
attestations the policy requires verify there. The digest never changes.

A destination that holds tags immutable (Harbor, ECR) and refuses to update
a signature or referrers fallback tag fails the promotion (exit 2) with the
registry's refusal, and DST is not tagged: exempt those tags from the rule.

DST is never overwritten: when it exists and points at another digest,
promote exits 2 and writes nothing; when it already points at SRC's digest
(a re-run, or a plain crane copy that left the signatures behind), promote
copies the signature, attestation and SBOM tags and referrers DST lacks,
verifies the signatures there, and leaves the tag as it is. When SRC fails,
promote prints the report, exits 1 and writes nothing. A registry or network
error, also while reading signatures, exits 2.`,
		Example: `  imgctl promote reg.example.com/app:ci-123 reg.example.com/release/app:1.0 --policy policy.yaml
  imgctl promote staging.example.com/app:1.0 prod.example.com/app:1.0 --key cosign.pub`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error { return o.promote(cmd, ro, args) },
	}
	o.add(cmd.Flags())
	return cmd
}

// promote runs promote with the parsed flags.
func (o *gateFlags) promote(cmd *cobra.Command, ro *rootOptions, args []string) error {
	rc := ro.registry()
	src, err := rc.ParseReference(args[0])
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUsage, err)
	}
	dst, err := parseTag(rc.ParseReference, "DST", args[1], true)
	if err != nil {
		return err
	}
	gate, err := o.gate(verify.Options{})
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	gate.Registry = rc
	pr, err := promote.Run(ctx, gate, src, dst, promote.Options{Registry: rc, Logger: ro.logger(cmd)})
	if pr != nil && pr.Report != nil {
		if perr := printPromotion(cmd, ro.output, pr, err); perr != nil && err == nil {
			err = perr
		}
		summarizePromotion(ro.githubOutput(cmd), pr, err)
	}
	if errors.Is(err, promote.ErrRefused) {
		return fmt.Errorf("%w (%w)", err, ErrCheckFailed)
	}
	return err
}

// printPromotion prints the report and, unless promoting failed with err,
// what happened to DST: after a failed copy the tag was not written, and
// pr.Pushed is false for that reason, not because DST already pointed at
// the source.
func printPromotion(cmd *cobra.Command, format string, pr *promote.Promotion, err error) error {
	w := cmd.OutOrStdout()
	if format == "json" {
		return writeJSON(w, map[string]any{"source": pr.Source.String(), "target": pr.Target.String(),
			"digest": pr.Source.DigestStr(), "pushed": pr.Pushed, "passed": pr.Report.Passed,
			"signatures": map[string]int{"tags": pr.Signatures.Tags, "referrers": pr.Signatures.Referrers},
			"verify":     pr.Report})
	}
	if perr := printReport(w, "text", pr.Report); perr != nil || !pr.Report.Passed || err != nil {
		return perr
	}
	if !pr.Pushed {
		if n := pr.Signatures; n.Tags+n.Referrers > 0 {
			_, perr := fmt.Fprintf(w, "%s already points at %s (copied %d signature tags, %d referrers there)\n",
				pr.Target, pr.Source.DigestStr(), n.Tags, n.Referrers)
			return perr
		}
		_, perr := fmt.Fprintf(w, "%s already points at %s\n", pr.Target, pr.Source.DigestStr())
		return perr
	}
	_, perr := fmt.Fprintf(w, "promoted %s to %s (%d signature tags, %d referrers)\n", pr.Source, pr.Target, pr.Signatures.Tags, pr.Signatures.Referrers)
	return perr
}

// summarizePromotion appends the promotion to the GitHub step summary:
// whether DST was tagged, the source's platforms and the gate's report.
func summarizePromotion(g githubOutput, pr *promote.Promotion, err error) {
	note := fmt.Sprintf("Promoted %s to %s.", code(pr.Source.String()), code(pr.Target.String()))
	switch {
	case !pr.Report.Passed:
		note = fmt.Sprintf("Refused: %s is not tagged.", code(pr.Target.String()))
	case err != nil:
		note = fmt.Sprintf("Failed: %s is not tagged (%v).", code(pr.Target.String()), err)
	case !pr.Pushed:
		note = fmt.Sprintf("%s already points at %s.", code(pr.Target.String()), code(pr.Source.DigestStr()))
	}
	g.verified(fmt.Sprintf("imgctl promote %s → %s", code(pr.Source.String()), code(pr.Target.String())), snapshotRows(pr.Snapshot), pr.Report, note)
}
