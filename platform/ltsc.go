package platform

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrUnknownTarget is returned for a target that is neither an LTSC name, a
// build number nor a Windows version.
var ErrUnknownTarget = errors.New("unknown target")

// Release is a Windows Server long-term servicing channel release.
type Release struct {
	// Name is the tag name used by Microsoft's images, e.g. ltsc2022.
	Name string
	// Server is the product name, e.g. Windows Server 2022.
	Server string
	// Build is the Windows build number of the release.
	Build uint32
}

// Releases lists the LTSC releases imgctl knows, oldest first.
var Releases = []Release{
	{Name: "ltsc2019", Server: "Windows Server 2019", Build: 17763},
	{Name: "ltsc2022", Server: "Windows Server 2022", Build: 20348},
	{Name: "ltsc2025", Server: "Windows Server 2025", Build: 26100},
}

// DefaultTargets are the targets verify checks when none are given and the
// index has Windows entries.
var DefaultTargets = []string{"ltsc2022", "ltsc2025"}

// ReleaseForBuild returns the LTSC release with that build.
func ReleaseForBuild(build uint32) (Release, bool) {
	for _, r := range Releases {
		if r.Build == build {
			return r, true
		}
	}
	return Release{}, false
}

// ReleaseName returns the LTSC name for an os.version ("ltsc2025"), or "" when
// the build is not an LTSC release or the version is unreadable.
func ReleaseName(osVersion string) string {
	b, ok := Build(osVersion)
	if !ok {
		return ""
	}
	r, ok := ReleaseForBuild(b)
	if !ok {
		return ""
	}
	return r.Name
}

// Target is a Windows node build to check an index against.
type Target struct {
	// Name is how the user named it: ltsc2022, 20348, or 10.0.20348.4297.
	Name string
	// Version is the host version; the revision is optional.
	Version Version
}

// Host returns the platform of a windows/amd64 node of this target, in the
// form containerd's DefaultSpec uses on Windows.
func (t Target) Host() Platform {
	return Platform{OS: "windows", Architecture: "amd64", OSVersion: t.Version.String()}
}

// ParseTarget accepts ltsc2019|ltsc2022|ltsc2025, a build number (20348), or
// a Windows version (10.0.20348 or 10.0.20348.4297).
func ParseTarget(s string) (Target, error) {
	in := strings.TrimSpace(s)
	name := strings.ToLower(in)
	for _, r := range Releases {
		if r.Name == name {
			return Target{Name: r.Name, Version: Version{Major: 10, Build: r.Build}}, nil
		}
	}
	if !strings.Contains(name, ".") {
		b, err := strconv.ParseUint(name, 10, 16)
		if err != nil || b == 0 {
			return Target{}, fmt.Errorf("%w %q: want ltsc2019, ltsc2022, ltsc2025, a build number or a Windows version", ErrUnknownTarget, s)
		}
		return Target{Name: in, Version: Version{Major: 10, Build: uint32(b)}}, nil
	}
	v, err := ParseHostVersion(name)
	if err != nil {
		return Target{}, fmt.Errorf("%w %q: %w", ErrUnknownTarget, s, err)
	}
	return Target{Name: in, Version: v}, nil
}

// ParseTargets parses a list of targets, e.g. from --windows ltsc2022,ltsc2025.
func ParseTargets(list []string) ([]Target, error) {
	var out []Target
	var errs []error
	for _, s := range list {
		if strings.TrimSpace(s) == "" {
			continue
		}
		t, err := ParseTarget(s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, t)
	}
	return out, errors.Join(errs...)
}
