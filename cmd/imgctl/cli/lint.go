package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/imgctl/imgctl/build"
	"github.com/imgctl/imgctl/lint"
)

func newLintCmd(ro *rootOptions) *cobra.Command {
	f := &variantFlags{}
	cmd := &cobra.Command{
		Use:   "lint [CONTEXT]",
		Short: "Check a Dockerfile for problems that break a multi-OS build, without building",
		Long: `lint runs the checks imgctl build runs before it solves: for every target
platform and Windows variant it resolves the Dockerfile's stage graph and
reports RUN in a stage that runs on Windows, exec-form instructions that are not
valid JSON, and shell-form ENTRYPOINT/CMD in Windows stages. Exit 0 when clean,
1 on findings, 2 on usage errors or an unreadable Dockerfile.`,
		Example: `  imgctl lint examples/hello
  imgctl lint -f build/Dockerfile --windows ltsc2022,ltsc2025 --build-arg VERSION=1.0 -o json .`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			o, err := f.options(dir)
			if err != nil {
				return err
			}
			p, err := build.Prepare(o)
			var pe *lint.Error
			if err != nil && !errors.As(err, &pe) {
				return err
			}
			var findings []lint.Finding
			if pe != nil {
				findings = pe.Findings
			}
			if err := printFindings(cmd.OutOrStdout(), ro.output, p.File, findings); err != nil {
				return err
			}
			if len(findings) > 0 {
				return ErrCheckFailed
			}
			return nil
		},
	}
	f.add(cmd.Flags())
	return cmd
}

// printFindings writes preflight findings as file:line lines, or as JSON
// {"file", "passed", "findings"}.
func printFindings(w io.Writer, format, file string, findings []lint.Finding) error {
	if findings == nil {
		findings = []lint.Finding{}
	}
	if format == "json" {
		return writeJSON(w, map[string]any{"file": file, "passed": len(findings) == 0, "findings": findings})
	}
	for _, f := range findings {
		fmt.Fprintln(w, f)
	}
	_, err := fmt.Fprintf(w, "%s: %d finding(s)\n", file, len(findings))
	return err
}
