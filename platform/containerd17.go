package platform

import (
	"strconv"
	"strings"

	"github.com/containerd/platforms"
	specs "github.com/opencontainers/image-spec/specs-go/v1"
)

type specsPlatform = specs.Platform

// Containerd17Engine is containerd 1.7 (github.com/containerd/platforms
// v0.2.x). That module cannot be imported next to v1 (same module path), so
// its rules are restated here: only ltsc2022 in its LTSC list, os.features
// not compared, and among several matches the highest revision number wins
// regardless of build, so on a 2025 host 20348.3091 beats 26100.2894.
type Containerd17Engine struct{}

// Name returns "containerd-1.7".
func (Containerd17Engine) Name() string { return Containerd17 }

// Match compares normalized os/arch/variant and, for Windows, the build with
// v0.2's compatibility check. On other hosts it uses platforms.Only, as
// Select does.
func (Containerd17Engine) Match(host, image Platform) bool {
	if host.OS != "windows" {
		return platforms.Only(ToSpec(host)).Match(ToSpec(image)) // as Select
	}
	h, i := platforms.Normalize(ToSpec(host)), platforms.Normalize(ToSpec(image))
	if h.OS != i.OS || h.Architecture != i.Architecture || h.Variant != i.Variant {
		return false
	}
	if h.OS != "windows" || image.OSVersion == "" {
		return true
	}
	return compat17(lenientVersion(host.OSVersion), lenientVersion(image.OSVersion))
}

// Select sorts matches by revision, greatest first, like v0.2's
// windowsmatcher.Less.
func (e Containerd17Engine) Select(host Platform, cands []Candidate) int {
	if host.OS != "windows" {
		mc := platforms.Only(ToSpec(host))
		return selectSorted(host, cands,
			func(p Platform) bool { return mc.Match(ToSpec(p)) },
			func(a, b Platform) bool { return mc.Less(ToSpec(a), ToSpec(b)) })
	}
	match := func(p Platform) bool { return e.Match(host, p) }
	return selectSorted(host, cands, match, func(a, b Platform) bool {
		ma, mb := match(a), match(b)
		if ma && mb {
			return revision(a.OSVersion) > revision(b.OSVersion)
		}
		return ma && !mb
	})
}

// lenientVersion parses as v0.2's getOSVersion did: fewer than three parts
// give the zero version, unreadable numbers give 0.
func lenientVersion(s string) Version {
	parts := strings.Split(s, ".")
	if len(parts) < 3 {
		return Version{}
	}
	n := func(p string) uint32 {
		u, _ := strconv.Atoi(p)
		return uint32(uint16(u))
	}
	return Version{Major: n(parts[0]) & 0xff, Minor: n(parts[1]) & 0xff, Build: n(parts[2])}
}

func compat17(host, ctr Version) bool {
	if host == (Version{}) {
		return true
	}
	if host.Major != ctr.Major || host.Minor != ctr.Minor {
		return false
	}
	const ltsc2022 = 20348
	if host.Build < ltsc2022 {
		return host.Build == ctr.Build
	}
	return ctr.Build >= ltsc2022 && ctr.Build <= host.Build
}

func revision(v string) int {
	parts := strings.Split(v, ".")
	if len(parts) < 4 {
		return 0
	}
	r, err := strconv.Atoi(parts[3])
	if err != nil {
		return 0
	}
	return r
}
