package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/imgctl/imgctl/internal/version"
)

// VersionInfo is what imgctl version prints (version.Info); its JSON field
// names are part of the CLI contract.
type VersionInfo = version.Info

// ModuleVersion is a module linked into the binary (version.Module).
type ModuleVersion = version.Module

// readVersionInfo reads the binary's build information, with what the
// release stamped into internal/version put over it.
func readVersionInfo() (VersionInfo, error) { return version.Read() }

// imgctlVersion is imgctl's version as provenance records it: the module
// version, with the VCS revision when the build recorded one; "" when the
// binary has no build information.
func imgctlVersion() string {
	v, err := readVersionInfo()
	if err != nil {
		return ""
	}
	s := v.Version
	if v.Revision != "" {
		s += " (revision " + v.Revision
		if v.Modified {
			s += ", modified"
		}
		s += ")"
	}
	return s
}

// versionOptions are the flags of version: none beyond the root's.
type versionOptions struct{}

func newVersionCmd(ro *rootOptions) *cobra.Command {
	o := &versionOptions{}
	return &cobra.Command{
		Use:   "version",
		Short: "Print imgctl's version and the BuildKit, go-containerregistry and cosign versions it is built with",
		Long: `version prints the version, the VCS revision and commit time the binary was
built from (as a release stamped them, else as go build recorded them), the Go version, and the versions of github.com/moby/buildkit,
github.com/google/go-containerregistry and github.com/sigstore/cosign/v2 that
are linked in. -o json prints {"version", "revision", "time", "modified", "go",
"dependencies": [{"path", "version"}]}.`,
		Example: `  imgctl version
  imgctl version -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, ro, args) },
	}
}

// run runs the verb with the parsed flags.
func (o *versionOptions) run(cmd *cobra.Command, ro *rootOptions, _ []string) error {
	v, err := readVersionInfo()
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	if ro.output == "json" {
		return writeJSON(w, v)
	}
	rev := v.Revision
	if rev == "" {
		rev = "unknown"
	}
	if v.Modified {
		rev += " (modified)"
	}
	fmt.Fprintf(w, "imgctl %s\nrevision: %s\n", v.Version, rev)
	if v.Time != "" {
		fmt.Fprintf(w, "time: %s\n", v.Time)
	}
	fmt.Fprintf(w, "go: %s\n", v.Go)
	for _, d := range v.Dependencies {
		ver := d.Version
		if ver == "" {
			ver = "unknown"
		}
		fmt.Fprintf(w, "%s %s\n", d.Path, ver)
	}
	return nil
}
