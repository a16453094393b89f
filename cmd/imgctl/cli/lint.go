package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/imgctl/imgctl/build"
	"github.com/imgctl/imgctl/lint"
	"github.com/imgctl/imgctl/platform"
)

// variantFlags are the flags build and lint share: which Dockerfile, which
// platforms and Windows releases, and the build args.
type variantFlags struct {
	file, target, baseTemplate string
	platforms, windows, bases  []string
	buildArgs                  []string
}

func (f *variantFlags) add(fl *pflag.FlagSet) {
	fl.StringVarP(&f.file, "file", "f", "", "Dockerfile (default CONTEXT/Dockerfile)")
	fl.StringSliceVar(&f.platforms, "platform", nil, "target platforms (default linux/amd64,linux/arm64,windows/amd64)")
	fl.StringSliceVar(&f.windows, "windows", nil, "one Windows variant per LTSC release, e.g. ltsc2022,ltsc2025")
	fl.StringSliceVar(&f.bases, "windows-base", nil, "base per release, RELEASE=REF (sets the WINDOWS_BASE build arg), e.g. ltsc2022=mcr.microsoft.com/windows/nanoserver:ltsc2022")
	fl.StringVar(&f.baseTemplate, "windows-base-template", "", "base for releases without --windows-base; {ltsc} is replaced (default "+build.DefaultWindowsBaseTemplate+")")
	fl.StringArrayVar(&f.buildArgs, "build-arg", nil, "build arg KEY=VALUE (KEY alone takes the environment's value), repeatable")
	fl.StringVar(&f.target, "target", "", "stage to build (default: the last)")
}

// options turns the flags into build options; errors wrap ErrUsage.
func (f *variantFlags) options(contextDir string) (build.Options, error) {
	o := build.Options{ContextDir: contextDir, Dockerfile: f.file, Target: f.target}
	var err error
	if o.Variants.Platforms, err = platform.ParseList(f.platforms); err != nil {
		return o, fmt.Errorf("%w: --platform: %w", ErrUsage, err)
	}
	o.Variants.Windows = splitList(f.windows)
	o.Variants.WindowsBaseTemplate = f.baseTemplate
	if o.Variants.WindowsBases, err = keyValues("--windows-base", splitList(f.bases), false); err != nil {
		return o, err
	}
	if o.Variants.BuildArgs, err = keyValues("--build-arg", f.buildArgs, true); err != nil {
		return o, err
	}
	if _, err := build.PlanVariants(o.Variants); err != nil {
		return o, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	return o, nil
}

// keyValues parses KEY=VALUE flags; with fromEnv, a bare KEY takes its
// value from the environment (and is left out when unset), as docker does.
func keyValues(flag string, in []string, fromEnv bool) (map[string]string, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, s := range in {
		k, v, ok := strings.Cut(s, "=")
		k = strings.TrimSpace(k)
		if k == "" || (!ok && !fromEnv) {
			return nil, fmt.Errorf("%w: %s %q: want KEY=VALUE", ErrUsage, flag, s)
		}
		if !ok {
			if v, ok = os.LookupEnv(k); !ok {
				continue
			}
		}
		out[k] = v
	}
	return out, nil
}

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
