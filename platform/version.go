package platform

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrMalformedVersion is returned for an os.version that is not four
// dot-separated decimal numbers.
var ErrMalformedVersion = errors.New("malformed os.version")

// Version is a Windows version major.minor.build.revision, e.g.
// 10.0.26100.2894. Build is fixed per release; revision grows with each
// monthly update.
type Version struct {
	Major, Minor, Build, Revision uint32
	// HasRevision is false for a three-part host version such as 10.0.20348.
	HasRevision bool
}

// ParseVersion parses a full image os.version: exactly four dot-separated
// decimal numbers.
func ParseVersion(s string) (Version, error) {
	v, err := parseParts(s, 4, 4)
	if err != nil {
		return Version{}, err
	}
	return v, nil
}

// ParseHostVersion parses a host version, which may omit the revision
// (10.0.20348) as containerd's DefaultSpec does on Windows.
func ParseHostVersion(s string) (Version, error) {
	return parseParts(s, 3, 4)
}

func parseParts(s string, lo, hi int) (Version, error) {
	parts := strings.Split(s, ".")
	if len(parts) < lo || len(parts) > hi {
		return Version{}, fmt.Errorf("%w: %q: want %d dot-separated numbers", ErrMalformedVersion, s, hi)
	}
	var n [4]uint32
	for i, p := range parts {
		if p == "" || strings.TrimLeft(p, "0123456789") != "" {
			return Version{}, fmt.Errorf("%w: %q: part %d (%q) is not a number", ErrMalformedVersion, s, i+1, p)
		}
		u, err := strconv.ParseUint(p, 10, 32)
		if err != nil {
			return Version{}, fmt.Errorf("%w: %q: %v", ErrMalformedVersion, s, err)
		}
		n[i] = uint32(u)
	}
	if n[2] > 0xffff {
		return Version{}, fmt.Errorf("%w: %q: build %d is out of range", ErrMalformedVersion, s, n[2])
	}
	return Version{Major: n[0], Minor: n[1], Build: n[2], Revision: n[3], HasRevision: len(parts) == 4}, nil
}

// String formats the version, with the revision when it has one.
func (v Version) String() string {
	if !v.HasRevision {
		return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Build)
	}
	return fmt.Sprintf("%d.%d.%d.%d", v.Major, v.Minor, v.Build, v.Revision)
}

// BuildPrefix returns major.minor.build, the part engines match on.
func (v Version) BuildPrefix() string {
	return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Build)
}

// Compare orders versions numerically by major, minor, build, then revision.
func (v Version) Compare(o Version) int {
	for _, d := range [][2]uint32{{v.Major, o.Major}, {v.Minor, o.Minor}, {v.Build, o.Build}, {v.Revision, o.Revision}} {
		if d[0] != d[1] {
			if d[0] < d[1] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// Build returns the build number of an os.version string (third part), and
// false when the string has no readable build. It is lenient on purpose: it
// is used for display and grouping, not for validation.
func Build(osVersion string) (uint32, bool) {
	v, err := ParseHostVersion(osVersion)
	if err != nil {
		return 0, false
	}
	return v.Build, true
}
