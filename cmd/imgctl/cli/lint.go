package cli

import (
	"errors"
	"fmt"
	"io"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/spf13/cobra"

	"github.com/imgctl/imgctl/build"
	"github.com/imgctl/imgctl/findings"
	"github.com/imgctl/imgctl/lint"
	"github.com/imgctl/imgctl/registry"
)

type lintOptions struct {
	variantFlags
	resolve bool
}

func newLintCmd(ro *rootOptions) *cobra.Command {
	o := &lintOptions{}
	cmd := &cobra.Command{
		Use:   "lint [CONTEXT]",
		Short: "Check a Dockerfile for problems that break a multi-OS build, without building",
		Long: `lint runs the checks imgctl build runs before it solves: for every target
platform and Windows variant it resolves the Dockerfile's stage graph and
reports RUN in a stage that runs on Windows, exec-form instructions that are not
valid JSON, shell-form ENTRYPOINT/CMD in Windows stages, and Windows bases that
cannot give the release being built: a FROM that does not use ${WINDOWS_BASE}
while several --windows releases are built, or whose tag names another release
(ltsc2019/1809, ltsc2022, ltsc2025, 20H2, 10.0.BUILD...). With --resolve, a base
whose reference names no release (a digest, or a tag such as latest) is read
from its registry and its os.version compared. Exit 0 when clean, 1 on
findings, 2 on usage errors, an unreadable Dockerfile or a registry error.
-o sarif prints a SARIF 2.1.0 log for code scanning.`,
		Example: `  imgctl lint examples/hello
  imgctl lint -f build/Dockerfile --windows ltsc2022,ltsc2025 --build-arg VERSION=1.0 -o json .
  imgctl lint --windows ltsc2022,ltsc2025 --windows-base-template reg.example.com/nanoserver:{ltsc} --resolve .`,
		Args:        cobra.MaximumNArgs(1),
		Annotations: map[string]string{sarifCapable: "true"},
		RunE:        func(cmd *cobra.Command, args []string) error { return o.run(cmd, ro, args) },
	}
	o.variantFlags.add(cmd.Flags())
	cmd.Flags().BoolVar(&o.resolve, "resolve", false, "read the os.version of Windows bases whose reference names no release (a digest, latest) from their registry")
	return cmd
}

// run lints the Dockerfile of the context args names ("." without one).
func (o *lintOptions) run(cmd *cobra.Command, ro *rootOptions, args []string) error {
	dir := "."
	if len(args) == 1 {
		dir = args[0]
	}
	bo, err := o.variantFlags.options(dir)
	if err != nil {
		return err
	}
	if o.resolve {
		bo.BaseResolver = baseResolver(cmd, ro.registry())
	}
	p, err := build.Prepare(bo)
	var pe *lint.Error
	if err != nil && !errors.As(err, &pe) {
		return err
	}
	var fs []findings.Finding
	if pe != nil {
		fs = pe.Findings
	}
	if ro.output == outputSARIF {
		err = writeSARIF(cmd.OutOrStdout(), lintRules, fs)
	} else {
		err = printFindings(cmd.OutOrStdout(), ro.output, p.File, fs)
	}
	if err != nil {
		return err
	}
	ro.githubOutput(cmd).lint(p.File, fs)
	if len(fs) > 0 {
		return ErrCheckFailed
	}
	return nil
}

// baseResolver reads, for lint --resolve, the platforms a base offers
// through the run's registry client: an index's child descriptors' (where
// build picks its base), or a single image's config platform. Each
// reference is read once per run.
func baseResolver(cmd *cobra.Command, rc *registry.Client) lint.BaseResolver {
	read := map[string][]v1.Platform{}
	return func(s string) ([]v1.Platform, error) {
		if ps, ok := read[s]; ok {
			return ps, nil
		}
		f, err := fetch(cmd, rc, s)
		if err != nil {
			return nil, err
		}
		var ps []v1.Platform
		if f.Index != nil {
			im, err := f.Index.IndexManifest()
			if err != nil {
				return nil, fmt.Errorf("reading %s: %w", s, err)
			}
			for _, d := range im.Manifests {
				if d.Platform != nil {
					ps = append(ps, *d.Platform)
				}
			}
		} else {
			cf, err := f.Image.ConfigFile()
			if err != nil {
				return nil, fmt.Errorf("reading the config of %s: %w", s, err)
			}
			if p := cf.Platform(); p != nil {
				ps = append(ps, *p)
			}
		}
		read[s] = ps
		return ps, nil
	}
}

// printFindings writes preflight findings as file:line lines, or as JSON
// {"file", "passed", "findings"}.
func printFindings(w io.Writer, format, file string, fs []findings.Finding) error {
	if fs == nil {
		fs = []findings.Finding{}
	}
	if format == "json" {
		return writeJSON(w, map[string]any{"file": file, "passed": len(fs) == 0, "findings": fs})
	}
	for _, f := range fs {
		fmt.Fprintln(w, lint.FormatFinding(f))
	}
	_, err := fmt.Fprintf(w, "%s: %d finding(s)\n", file, len(fs))
	return err
}
