package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/verify"
)

type verifyOptions struct {
	targets      []string
	require      []string
	hostProcess  bool
	runAsNonRoot bool
	engines      []string
	concurrency  int
	layers       bool
	gateFlags
}

func newVerifyCmd(ro *rootOptions) *cobra.Command {
	o := &verifyOptions{}
	cmd := &cobra.Command{
		Use:         "verify REF",
		Annotations: map[string]string{sarifCapable: "true"},
		Short:       "Check that every Windows variant carries an os.version target nodes accept",
		Long: `verify reads an index, its child manifests and their configs (no layer unless --layers)
and simulates how containerd 2.x, containerd 1.7 and Docker pick a variant on
each target Windows build. With --key it checks the cosign signatures of the
digest REF names, as cosign verify, policy-controller and Kyverno do (an
index's signature covers its children by digest); --signed all also requires
one on every child but attestations. It reads them offline: the legacy .sig
tags and the Sigstore bundles (cosign v3) stored as referrers or under the
referrers tag fallback; any signature that verifies with the key counts, and
the report names the digests checked. --policy adds
a policy file. It
exits 0 when the index passes, 1 when it has error findings, and 2 on usage,
network or registry errors.

--layers also reads, in full, the layers each Windows image adds to its
base (its org.opencontainers.image.base.name/.digest annotations name the
base, whose layers are never read) and checks every tar entry against the
layout a Windows node imports: the roots Files and Hives, everything else
under Files/, Hives/ or UtilityVM/, whiteouts only under Files/
(windows-layer-layout, an error: a COPY --link layer built on Linux misses
it, and its files would not appear under C:\). An image without base
annotations is not read (layers-unchecked, a warning). The report says how
many layers and bytes it read.

A policy's supplyChain section requires, per platform, signatures by given
keys, a SLSA provenance attestation from a trusted builder
(missing-provenance, untrusted-builder) and an SBOM (missing-sbom). verify
reads attestation manifests and their provenance statements only when the
policy requires them.`,
		Example: `  imgctl verify registry.example.com/app:1.0 --windows ltsc2022,ltsc2025
  imgctl verify registry.example.com/app:1.0 --layers
  imgctl verify registry.example.com/app:1.0 --require-platform linux/amd64,linux/arm64 -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, ro, args[0]) },
	}
	fl := cmd.Flags()
	addWindowsTargetsFlag(fl, &o.targets, defaultTargets)
	renamedFlag(fl, "target", "windows")
	fl.StringSliceVar(&o.require, "require-platform", nil, "platforms the index must contain, e.g. linux/amd64,windows/amd64:10.0.26100")
	fl.BoolVar(&o.hostProcess, "hostprocess", false, "accept Windows variants without os.version (HostProcess images)")
	fl.BoolVar(&o.runAsNonRoot, "run-as-non-root", false, "fail Windows images whose user is ContainerAdministrator")
	fl.StringSliceVar(&o.engines, "engine", nil, "simulate only these engines, which then all decide; "+engineFlagHelp+" (default: every containerd release line decides, Docker warns)")
	fl.BoolVar(&o.layers, "layers", false, "also read each Windows image's own layers (not its base's) and check their entries are in the Windows layout")
	addJobsFlag(fl, &o.concurrency, jobsReads)
	renamedFlag(fl, "concurrency", "jobs")
	o.add(fl)
	addNodesFlag(cmd)
	return cmd
}

// run verifies the index or image ref names.
func (o *verifyOptions) run(cmd *cobra.Command, ro *rootOptions, ref string) error {
	vo, err := o.options(cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	// Nodes stand in for the default LTSC targets.
	vo.NoDefaultTargets = len(nodesOf(cmd)) > 0
	gate, err := o.gate(vo)
	if err != nil {
		return err
	}
	rc := ro.registry()
	f, err := fetch(cmd, rc, ref)
	if err != nil {
		return err
	}
	snap, err := loadSnapshot(cmd.Context(), f, o.concurrency)
	if err != nil {
		return fmt.Errorf("%s: %w", f.Ref, err)
	}
	gate.Registry, gate.Layers = rc, o.layers
	rep, err := gate.Check(cmd.Context(), f.Ref.String(), f.Ref.Context(), snap)
	if err != nil {
		return err
	}
	mergeNodes(cmd, snap, rep, len(gate.Verify.Targets) > 0)
	if err := printReport(cmd.OutOrStdout(), ro.output, rep); err != nil {
		return err
	}
	ro.githubOutput(cmd).verified("imgctl verify "+code(f.Ref.String()), snapshotRows(snap), rep)
	if !rep.Passed {
		return ErrCheckFailed
	}
	return nil
}

func (o *verifyOptions) options(stderr io.Writer) (verify.Options, error) {
	vo := verify.Options{HostProcess: o.hostProcess, RunAsNonRoot: o.runAsNonRoot}
	var err error
	if vo.Targets, err = platform.ParseTargets(splitList(o.targets)); err != nil {
		return vo, fmt.Errorf("%w: --windows: %w", ErrUsage, err)
	}
	if vo.RequirePlatforms, err = platform.ParseList(o.require); err != nil {
		return vo, fmt.Errorf("%w: --require-platform: %w", ErrUsage, err)
	}
	if vo.Engines, err = parseEngines(o.engines, stderr); err != nil {
		return vo, err
	}
	return vo, nil
}

// printReport writes a verify report as JSON per the contract or as text.
func printReport(w io.Writer, format string, rep *verify.Report) error {
	switch format {
	case "json":
		return writeJSON(w, rep)
	case outputSARIF:
		return writeSARIF(w, verifyRules, rep.Findings)
	}
	status := "PASSED"
	if !rep.Passed {
		status = "FAILED"
	}
	fmt.Fprintf(w, "%s %s@%s\n", status, rep.Ref, rep.Digest)
	if len(rep.Targets) > 0 {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TARGET\tBUILD\tENGINES\tSELECTS\tOS.VERSION")
		for _, g := range groupTargets(rep.Targets) {
			sel := g.Selected
			if sel == "" {
				sel = "(nothing)"
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", g.Target, g.Build, g.Releases, shortDigest(sel), g.OSVersion)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, f := range rep.Findings {
		where := subject(f)
		if where != "" {
			where = " " + where
		}
		fmt.Fprintf(w, "%-7s %s%s: %s\n", f.Severity, f.Rule, where, f.Message)
	}
	if sc := rep.Signatures; sc != nil {
		fmt.Fprintf(w, "signatures: scope %s, checked %s\n", sc.Scope, strings.Join(sc.Digests, ", "))
	}
	if l := rep.Layers; l != nil {
		fmt.Fprintf(w, "layers: read %d layer(s), %d bytes\n", l.Read, l.Bytes)
	}
	_, err := fmt.Fprintf(w, "%d error(s), %d finding(s)\n", len(rep.Errors()), len(rep.Findings))
	return err
}

// groupTargets merges the rows of one target whose engines select the same
// manifest, in order of first appearance, and names their engines by the
// releases that run them ("containerd 1.7.19–2.1.5, docker ≥ 25.0.0"; a
// profile without a release range by its name).
func groupTargets(rows []verify.TargetResult) []verify.TargetResult {
	type key struct{ target, selected string }
	var out []verify.TargetResult
	engines := map[key][]string{}
	at := map[key]int{}
	for _, r := range rows {
		k := key{r.Target, r.Selected}
		if _, ok := at[k]; !ok {
			at[k] = len(out)
			out = append(out, r)
		}
		engines[k] = append(engines[k], r.Engine)
	}
	for k, i := range at {
		out[i].Releases = platform.RangesOf(engines[k]...)
		if out[i].Releases == "" {
			out[i].Releases = strings.Join(engines[k], ", ")
		}
	}
	return out
}
