package cli

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// versionDeps are the modules whose linked versions imgctl version reports:
// the builder client, the registry library and the signing library, the
// three whose behaviour a bug report depends on.
var versionDeps = []string{
	"github.com/moby/buildkit",
	"github.com/google/go-containerregistry",
	"github.com/sigstore/cosign/v2",
}

// What the release stamps into the binary at link time (make release passes
// them with go build -ldflags "-X ..."; see internal/release). The linker's
// -X sets only package-level string variables, so these three are the one
// exception to "no globals"; nothing assigns them at run time. Empty means
// "not stamped": the values then come from debug.BuildInfo.
var (
	stampedVersion  string
	stampedRevision string
	stampedTime     string
)

// VersionInfo is what imgctl version prints; its JSON field names are part
// of the CLI contract.
type VersionInfo struct {
	// Version is the version the release stamped, else the main module's
	// version: a release tag for go install ...@vX, "(devel)" or a Go
	// pseudo-version for a build from a checkout.
	Version string `json:"version"`
	// Revision is the VCS commit the binary was built from (as stamped, or
	// as go build recorded it); "" when there is none (go test,
	// -buildvcs=false).
	Revision string `json:"revision"`
	// Time is the commit time (RFC 3339, as stamped or recorded), or "".
	Time string `json:"time"`
	// Modified is true when the work tree had uncommitted changes.
	Modified bool `json:"modified"`
	// Go is the Go toolchain that built the binary.
	Go string `json:"go"`
	// Dependencies are the linked versions of BuildKit, go-containerregistry
	// and cosign, in that order.
	Dependencies []ModuleVersion `json:"dependencies"`
}

// ModuleVersion is a module linked into the binary.
type ModuleVersion struct {
	// Path is the module path, e.g. github.com/moby/buildkit.
	Path string `json:"path"`
	// Version is the linked version (a replacement's, when replaced); ""
	// when the build information does not list the module (a test binary
	// lists no dependencies).
	Version string `json:"version"`
}

// readVersionInfo reads the binary's build information.
func readVersionInfo() (VersionInfo, error) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return VersionInfo{}, fmt.Errorf("reading build information: the binary has none")
	}
	v := VersionInfo{Version: bi.Main.Version, Go: bi.GoVersion, Dependencies: []ModuleVersion{}}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	for _, path := range versionDeps {
		mv := ModuleVersion{Path: path}
		for _, d := range bi.Deps {
			if d.Path != path {
				continue
			}
			mv.Version = d.Version
			if d.Replace != nil {
				mv.Version = d.Replace.Version
			}
		}
		v.Dependencies = append(v.Dependencies, mv)
	}
	applyStamp(&v, stampedVersion, stampedRevision, stampedTime)
	return v, nil
}

// stampPackage is the import path whose variables StampLDFlags sets.
const stampPackage = "github.com/imgctl/imgctl/cmd/imgctl/cli"

// StampLDFlags returns the go build -ldflags value that stamps version,
// revision and time (RFC 3339) into imgctl, and strips the symbol table
// and DWARF (-s -w), as a release binary is built. imgctl version then
// reports the stamped values.
func StampLDFlags(version, revision, time string) string {
	return fmt.Sprintf("-s -w -X '%[1]s.stampedVersion=%[2]s' -X '%[1]s.stampedRevision=%[3]s' -X '%[1]s.stampedTime=%[4]s'",
		stampPackage, version, revision, time)
}

// applyStamp puts what the release stamped over what the build recorded;
// an empty value leaves the recorded one.
func applyStamp(v *VersionInfo, version, revision, time string) {
	if version != "" {
		v.Version = version
	}
	if revision != "" {
		v.Revision = revision
	}
	if time != "" {
		v.Time = time
	}
}

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

func newVersionCmd(ro *rootOptions) *cobra.Command {
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
		RunE: func(cmd *cobra.Command, _ []string) error {
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
		},
	}
}
