package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/docker/buildx/util/buildflags"
	"github.com/spf13/cobra"

	"github.com/imgctl/imgctl/bake"
	"github.com/imgctl/imgctl/build"
	"github.com/imgctl/imgctl/findings"
	"github.com/imgctl/imgctl/lint"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/verify"
)

// bakeOptions are the flags of imgctl bake: build's builder, node and
// output flags, and bake's own.
type bakeOptions struct {
	buildOptions
	files, set []string
	print      bool
	jobs       int
}

// buildx bake's environment: the files to read when -f names none (a
// list, split at $BUILDX_BAKE_PATH_SEPARATOR, else the OS's path list
// separator), and contexts relative to the file that defines them.
const (
	envBakeFile          = "BUILDX_BAKE_FILE"
	envBakeFileSeparator = "BUILDX_BAKE_PATH_SEPARATOR"
	envBakeRelativePaths = "BUILDX_BAKE_FILE_RELATIVE_PATHS"
)

// bakeFiles are the -f files, else those $BUILDX_BAKE_FILE lists, as
// buildx bake reads them; none means buildx's default names.
func bakeFiles(files []string, lookup func(string) (string, bool)) []string {
	v, ok := lookup(envBakeFile)
	if len(files) > 0 || !ok {
		return files
	}
	sep, _ := lookup(envBakeFileSeparator)
	if sep == "" {
		sep = string(os.PathListSeparator)
	}
	for f := range strings.SplitSeq(v, sep) {
		if f = strings.TrimSpace(f); f != "" {
			files = append(files, f)
		}
	}
	return files
}

func newBakeCmd(ro *rootOptions) *cobra.Command {
	o := &bakeOptions{}
	cmd := &cobra.Command{
		Use:   "bake [flags] [TARGET|GROUP...]",
		Short: "Build the targets of a buildx bake file, each into one verified tag",
		Long: `bake reads a buildx bake definition (HCL, JSON or a compose file; -f, else
buildx's default names in the working directory: docker-bake.hcl,
docker-bake.json, compose.yaml, docker-compose.yml...) with buildx's own bake
package, so that variables (from the environment too), functions, inherits,
matrix, groups and --set mean what they mean in docker buildx bake. Without
TARGET it builds the group or target "default".

Each target is one imgctl build: lint, one solve for its Linux platforms and
one per Windows release, one index at its tags with every os.version, verify.
A target's platforms may name Windows releases as windows(10.0.20348)/amd64,
windows/amd64:10.0.26100 or ltsc2022: each is one Windows variant, as build
--windows makes it, FROM the base in WINDOWS_BASE (an arg with {ltsc} in it
names each release's base; without one, ` + "mcr.microsoft.com/windows/nanoserver:{ltsc}" + `).
A plain windows/amd64 without a release is one Windows variant built from the
Dockerfile's own WINDOWS_BASE, as with build. No platforms means build's
default: linux/amd64, linux/arm64 and windows/amd64.

Every target's tags are checked before the first build starts: an existing
tag, or a tag two targets write, refuses the bake with nothing built. The
targets then build concurrently (--jobs at once); one that fails does not
stop the others, and the report names each that failed and why. --print
prints the evaluated definition as docker buildx bake --print does and builds
nothing. Exit 0 when every target passed, 1 when a target had lint findings
or a failed verify (and none an error), 2 on an error in the definition, a
tag, the builder or a registry.`,
		Example: `  imgctl bake --print
  imgctl bake --builder tcp://buildkitd:1234 -f docker-bake.hcl --metadata-file bake.json
  imgctl bake -f docker-bake.hcl --set '*.platform=linux/amd64,ltsc2022,ltsc2025' app`,
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, ro, args) },
	}
	fl := cmd.Flags()
	fl.StringArrayVarP(&o.files, "file", "f", nil, "bake definition (HCL, JSON or compose), repeatable; - reads stdin (default: buildx's default names, docker-bake.hcl, compose.yaml...)")
	fl.StringArrayVar(&o.set, "set", nil, "override a target's value as docker buildx bake does: TARGET.KEY=VALUE (TARGET may be a pattern, *.platform=linux/amd64), repeatable")
	fl.BoolVar(&o.print, "print", false, "print the evaluated targets and groups as JSON, as docker buildx bake --print does, and build nothing")
	addJobsFlag(fl, &o.jobs, jobsTargets)
	fl.StringVar(&o.provenance, "provenance", "", "SLSA provenance of every target (*.attest=type=provenance,...): mode=min, mode=max, false; default: each target's attest, else mode=min")
	fl.StringVar(&o.sbom, "sbom", "", "SPDX SBOM of every target (*.attest=type=sbom,...): --sbom, --sbom=generator=IMAGE, --sbom=false; default: each target's attest")
	fl.Lookup("sbom").NoOptDefVal = "true"
	o.addBuilderFlags(fl)
	o.addRunFlags(fl)
	return cmd
}

// overrides are --set, then --sbom and --provenance as buildx bake turns
// them into overrides of every target's attest (in buildx's order), each
// checked as build checks it. Bare min and max, which build takes, are
// mode=min and mode=max.
func (o *bakeOptions) overrides() ([]string, error) {
	out := append([]string(nil), o.set...)
	for _, a := range []struct {
		typ, v string
		parse  func(string) error
	}{
		{"sbom", o.sbom, func(s string) error { _, err := parseSBOM(s); return err }},
		{"provenance", o.provenance, func(s string) error { _, err := parseProvenance(s); return err }},
	} {
		v := strings.TrimSpace(a.v)
		if v == "" {
			continue
		}
		if err := a.parse(v); err != nil {
			return nil, err
		}
		if a.typ == "provenance" && (v == build.ProvenanceMin || v == build.ProvenanceMax) {
			v = "mode=" + v
		}
		out = append(out, "*.attest="+buildflags.CanonicalizeAttest(a.typ, v))
	}
	return out, nil
}

// bakeTarget is one target's outcome as the report gives it.
type bakeTarget struct {
	Index     *build.MetadataIndex     `json:"index,omitempty"`
	Platforms []build.MetadataPlatform `json:"platforms,omitempty"`
	Verify    *verify.Report           `json:"verify,omitempty"`
	// Findings are the lint findings that stopped the target.
	Findings []findings.Finding `json:"findings,omitempty"`
	// Error is why the target failed: a build, registry or verify
	// error; empty when it was built.
	Error string `json:"error,omitempty"`
	// Passed: built, and verify passed or was skipped.
	Passed bool `json:"passed"`

	failed, errored bool
	lint            *lint.Error
	meta            *build.Metadata
}

func (o *bakeOptions) run(cmd *cobra.Command, ro *rootOptions, args []string) error {
	lockStderr(cmd)
	ctx := cmd.Context()
	overrides, err := o.overrides()
	if err != nil {
		return err
	}
	rel := false
	if v := strings.TrimSpace(os.Getenv(envBakeRelativePaths)); v != "" {
		if rel, err = strconv.ParseBool(v); err != nil {
			return fmt.Errorf("%w: $%s %q: %w", ErrUsage, envBakeRelativePaths, v, err)
		}
	}
	def, err := bake.Read(ctx, bake.Options{Files: bakeFiles(o.files, os.LookupEnv), Stdin: cmd.InOrStdin(), Targets: args, Overrides: overrides, FileRelativePaths: rel})
	if errors.Is(err, bake.ErrInvalidOverride) {
		return fmt.Errorf("%w: --set: %w", ErrUsage, err)
	}
	if err != nil {
		return err
	}
	if o.print {
		dt, err := def.Print()
		if err != nil {
			return err
		}
		_, err = cmd.OutOrStdout().Write(dt)
		return err
	}
	rc := ro.registry()
	targets, err := def.Plan(rc)
	if err != nil {
		return err
	}
	var bo build.Options
	if err := o.runOptions(cmd, ro, rc, &bo); err != nil {
		return err
	}
	if err := bake.CheckTags(ctx, rc, targets); err != nil {
		return err
	}
	pr, err := startProgress(cmd, o.progress)
	if err != nil {
		return err
	}
	bo.Status, bo.Note = pr.status, pr.note
	outs := bake.Build(ctx, targets, bake.BuildOptions{Base: bo, Jobs: o.jobs})
	pr.wait()
	return o.report(cmd, ro, rc, outs)
}

// report verifies every target that was built, writes the metadata file
// (buildx's shape: an object keyed by target) and prints each target's
// outcome; the error names every target that failed and why.
func (o *bakeOptions) report(cmd *cobra.Command, ro *rootOptions, rc *registry.Client, outs []bake.Outcome) error {
	stderr, w, gh := cmd.ErrOrStderr(), cmd.OutOrStdout(), ro.githubOutput(cmd)
	results := map[string]*bakeTarget{}
	meta := map[string]build.Metadata{}
	var failed, errored []string
	for _, out := range outs {
		t, r := out.Target, &bakeTarget{}
		results[t.Name] = r
		r.check(cmd, rc, out, !o.noVerify)
		if r.meta != nil {
			meta[t.Name] = *r.meta
			gh.verified("imgctl bake "+code(t.Name)+" "+code(out.Result.Index.Tag.String()), metadataRows(*r.meta), r.Verify)
		}
		if r.lint != nil {
			gh.lint(r.Findings[0].File, r.Findings)
		}
		switch {
		case r.errored:
			errored = append(errored, t.Name+": "+r.Error)
		case r.failed:
			failed = append(failed, t.Name+": "+r.Error)
		}
	}
	if o.metadataFile != "" && len(meta) > 0 {
		if err := build.WriteMetadata(o.metadataFile, meta); err != nil {
			return err
		}
	}
	if err := printBake(w, ro.output, outs, results); err != nil {
		return err
	}
	n := len(failed) + len(errored)
	switch {
	case len(errored) > 0:
		fmt.Fprintf(stderr, "bake: %d of %d target(s) failed\n", n, len(outs))
		return fmt.Errorf("bake: %s", strings.Join(append(errored, failed...), "; "))
	case len(failed) > 0:
		fmt.Fprintf(stderr, "bake: %d of %d target(s) failed: %s\n", n, len(outs), strings.Join(failed, "; "))
		return ErrCheckFailed
	}
	fmt.Fprintf(stderr, "bake: %d target(s) passed\n", len(outs))
	return nil
}

// check fills r from a target's outcome, verifying the index it pushed
// when verify is set.
func (r *bakeTarget) check(cmd *cobra.Command, rc *registry.Client, out bake.Outcome, verify bool) {
	if errors.As(out.Err, &r.lint) {
		r.Findings, r.failed = r.lint.Findings, true
		r.Error = fmt.Sprintf("%d lint finding(s) in %s", len(r.Findings), r.Findings[0].File)
		return
	}
	if out.Err != nil {
		r.Error, r.errored = flagHint(cmd, out.Err).Error(), true
		return
	}
	res := out.Result
	fmt.Fprintf(cmd.ErrOrStderr(), "%s: pushed %s@%s (%d images)\n", out.Target.Name, strings.Join(tagStrings(res.Index.Tags), ", "), res.Index.Digest, len(res.Platforms))
	m := res.Metadata()
	r.meta, r.Index, r.Platforms = &m, &m.Index, m.Platforms
	if verify {
		rep, err := verifyBuilt(cmd, rc, out.Target.Releases(), res)
		if err != nil {
			r.Error, r.errored = err.Error(), true
			return
		}
		r.Verify = rep
		if !rep.Passed {
			r.Error, r.failed = "verify failed", true
			return
		}
	}
	r.Passed = true
}

// printBake prints every target's outcome, in target order: as text, its
// digest and verify report, or its lint findings; as JSON, one object
// {"targets": {NAME: ...}, "passed": BOOL}.
func printBake(w io.Writer, format string, outs []bake.Outcome, results map[string]*bakeTarget) error {
	if format == "json" {
		passed := true
		for _, r := range results {
			passed = passed && r.Passed
		}
		return writeJSON(w, map[string]any{"targets": results, "passed": passed})
	}
	for _, out := range outs {
		r := results[out.Target.Name]
		fmt.Fprintf(w, "== %s\n", out.Target.Name)
		switch {
		case r.lint != nil:
			if err := printFindings(w, "text", r.Findings[0].File, r.Findings); err != nil {
				return err
			}
		case r.Index != nil:
			fmt.Fprintln(w, r.Index.Digest)
			if r.Verify != nil {
				if err := printReport(w, "text", r.Verify); err != nil {
					return err
				}
			}
		}
		if r.errored {
			fmt.Fprintf(w, "error: %s\n", r.Error)
		}
	}
	return nil
}
