// Package version is what an imgctl binary knows of its own build: the
// version, revision and commit time a release stamps into it at link time
// (StampLDFlags), else what go build recorded (debug.ReadBuildInfo), and
// the versions of the libraries a bug report depends on. imgctl version
// prints it; internal/tools/release stamps it and checks it. It imports nothing
// of imgctl.
package version

import (
	"errors"
	"fmt"
	"runtime/debug"
)

// dependencies are the modules whose linked versions Info reports: the
// builder client, the registry library and the signing library, the three
// whose behaviour a bug report depends on.
var dependencies = []string{
	"github.com/moby/buildkit",
	"github.com/google/go-containerregistry",
	"github.com/sigstore/cosign/v2",
}

// What the release stamps into the binary at link time (StampLDFlags, which
// internal/tools/release passes to go build -ldflags). The linker's -X sets only
// package-level string variables, so these three are the one exception to
// "no globals"; nothing assigns them at run time. Empty means "not
// stamped": the values then come from debug.BuildInfo.
var (
	stampedVersion  string
	stampedRevision string
	stampedTime     string
)

// Package is the import path whose variables StampLDFlags sets: this
// package's.
const Package = "github.com/imgctl/imgctl/internal/version"

// StampLDFlags returns the go build -ldflags value that stamps version,
// revision and time (RFC 3339) into imgctl, and strips the symbol table
// and DWARF (-s -w), as a release binary is built. Read then reports the
// stamped values.
func StampLDFlags(version, revision, time string) string {
	return fmt.Sprintf("-s -w -X '%[1]s.stampedVersion=%[2]s' -X '%[1]s.stampedRevision=%[3]s' -X '%[1]s.stampedTime=%[4]s'",
		Package, version, revision, time)
}

// Info is what imgctl version prints; its JSON field names are part of the
// CLI contract.
type Info struct {
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
	Dependencies []Module `json:"dependencies"`
}

// Module is a module linked into the binary.
type Module struct {
	// Path is the module path, e.g. github.com/moby/buildkit.
	Path string `json:"path"`
	// Version is the linked version (a replacement's, when replaced); ""
	// when the build information does not list the module (a test binary
	// lists no dependencies).
	Version string `json:"version"`
}

// Read returns the running binary's Info: its build information with what
// the release stamped put over it.
func Read() (Info, error) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{}, errors.New("reading build information: the binary has none")
	}
	v := fromBuildInfo(bi)
	applyStamp(&v, stampedVersion, stampedRevision, stampedTime)
	return v, nil
}

// fromBuildInfo is the Info that bi records, before any stamp.
func fromBuildInfo(bi *debug.BuildInfo) Info {
	v := Info{Version: bi.Main.Version, Go: bi.GoVersion, Dependencies: []Module{}}
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
	for _, path := range dependencies {
		mv := Module{Path: path}
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
	return v
}

// applyStamp puts what the release stamped over what the build recorded;
// an empty value leaves the recorded one.
func applyStamp(v *Info, version, revision, time string) {
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
