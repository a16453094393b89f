package platform

import (
	"slices"
	"strconv"
	"strings"

	"github.com/containerd/platforms"
	specs "github.com/opencontainers/image-spec/specs-go/v1"
)

type specsPlatform = specs.Platform

// Profile names of the containerd lines, after the rules they model. The
// release each models is in docs/engines.md and ContainerdReleases.
const (
	// Containerd is platforms v1.0.0-rc.5 (containerd 2.4 and later):
	// floor ltsc2022 for every host from 20348 on, greatest os.version as
	// a string first.
	Containerd = "containerd"
	// ContainerdOSFeatures is rc.4 (containerd 2.3): the floor is the
	// largest LTSC strictly below the host, image os.features must be the
	// host's, string ranking.
	ContainerdOSFeatures = "containerd-os-features"
	// ContainerdLTSCFloor is rc.2 (containerd 2.1.6 to 2.2): the floor is
	// the largest LTSC strictly below the host, string ranking.
	ContainerdLTSCFloor = "containerd-ltsc-floor"
	// ContainerdIndexOrder is rc.0 and rc.1 (containerd 2.0 to 2.1.5):
	// v0.2's matching, index order wins.
	ContainerdIndexOrder = "containerd-index-order"
	// ContainerdLegacy is v0.2.1 (containerd 1.7.19 and later 1.7): index
	// order wins, and an entry without a descriptor platform is judged by
	// its config's os and architecture only.
	ContainerdLegacy = "containerd-legacy"
	// DockerStoreLTSCFloor is Docker's containerd image store on
	// platforms rc.2 (Docker 29.0 to 29.5): rc.2's matching through
	// platforms.Only, so index order wins.
	DockerStoreLTSCFloor = "docker-store-ltsc-floor"
	// DockerStoreOSFeatures is Docker's containerd image store on rc.4
	// (Docker 29.6 and later).
	DockerStoreOSFeatures = "docker-store-os-features"
)

// matchRules is how a platforms version decides that a Windows host accepts
// an image version.
type matchRules int

const (
	// rulesV02 is v0.2.1: LTSC list [20348], hosts below 20348 need the
	// same build, os.features not compared, versions read leniently
	// (unreadable numbers are 0).
	rulesV02 matchRules = iota
	// rulesRC1 is rc.1 and rc.0: v0.2.1's LTSC list, versions read
	// strictly (getWindowsOSVersion), a host without a version accepts all.
	// rc.0 saturates numbers out of range where rc.1 refuses them; either
	// way the image is rejected (golden cases out-of-range-*).
	rulesRC1
	// rulesRC2 is rc.2: LTSC list [20348, 26100], the floor is the largest
	// LTSC strictly below the host. (rc.3, which no release pins, already
	// compares os.features without stripping win32k.)
	rulesRC2
	// rulesRC4 is rc.2's versions, and image os.features (less one
	// win32k) a subset of the host's.
	rulesRC4
	// rulesLinked is the platforms version imgctl links (rc.5), called
	// directly.
	rulesLinked
)

// ranking is how the comparer orders several matches.
type ranking int

const (
	// rankIndex is platforms.Only's orderedPlatformComparer: the host's
	// own architecture before windows/386, then index order (stable sort).
	rankIndex ranking = iota
	// rankString is windowsMatchComparer.Less: greater os.version as a
	// string first.
	rankString
)

// ContainerdProfile is one containerd line, or Docker's containerd image
// store, as images.Manifest of that release runs it with the comparer it
// builds on a Windows node. Only the "containerd" profile calls the linked
// github.com/containerd/platforms for Windows: the others model versions
// that cannot be linked beside it (one module path), so their rules are
// restated here and judged against each release's own code through the
// golden table (platform/testdata/engines.json, made by
// internal/testing/enginegolden from internal/tools/containerd).
type ContainerdProfile struct {
	name  string
	rules matchRules
	rank  ranking
	// osArchConfig is containerd 1.7's rule for an entry without a
	// descriptor platform: only the config's os and architecture count.
	osArchConfig bool
}

var (
	profileContainerd            = ContainerdProfile{name: Containerd, rules: rulesLinked, rank: rankString}
	profileContainerdOSFeatures  = ContainerdProfile{name: ContainerdOSFeatures, rules: rulesRC4, rank: rankString}
	profileContainerdLTSCFloor   = ContainerdProfile{name: ContainerdLTSCFloor, rules: rulesRC2, rank: rankString}
	profileContainerdIndexOrder  = ContainerdProfile{name: ContainerdIndexOrder, rules: rulesRC1, rank: rankIndex}
	profileContainerdLegacy      = ContainerdProfile{name: ContainerdLegacy, rules: rulesV02, rank: rankIndex, osArchConfig: true}
	profileDockerStoreLTSCFloor  = ContainerdProfile{name: DockerStoreLTSCFloor, rules: rulesRC2, rank: rankIndex}
	profileDockerStoreOSFeatures = ContainerdProfile{name: DockerStoreOSFeatures, rules: rulesRC4, rank: rankIndex}
)

// ContainerdEngine is the newest containerd line's profile, "containerd".
func ContainerdEngine() Engine { return profileContainerd }

// Name returns the profile name.
func (p ContainerdProfile) Name() string { return p.name }

// Match reports whether the profile's comparer accepts image on host. On a
// Windows host the index-order profiles also accept windows/386, as
// platforms.Only's vector does; on other hosts every profile is
// platforms.Only of the host.
func (p ContainerdProfile) Match(host, image Platform) bool {
	return p.tier(host, image) >= 0
}

// tier is the position in the comparer's platform vector of the first
// platform that accepts image, or -1.
func (p ContainerdProfile) tier(host, image Platform) int {
	if host.OS != "windows" {
		if platforms.Only(ToSpec(host)).Match(ToSpec(image)) {
			return 0
		}
		return -1
	}
	vector := []Platform{host}
	if p.rank == rankIndex && Normalize(host).Architecture == "amd64" {
		h386 := host
		h386.Architecture = "386"
		vector = append(vector, h386)
	}
	for i, h := range vector {
		if p.matchOne(h, image) {
			return i
		}
	}
	return -1
}

// matchOne is one matcher: NewMatcher(host).Match(image) of the version.
func (p ContainerdProfile) matchOne(host, image Platform) bool {
	if p.rules == rulesLinked {
		return platforms.NewMatcher(ToSpec(host)).Match(ToSpec(image))
	}
	h, i := Normalize(host), Normalize(image)
	if h.OS != i.OS || h.Architecture != i.Architecture || h.Variant != i.Variant {
		return false
	}
	if p.rules == rulesRC4 && !featuresSubset(i.OSFeatures, h.OSFeatures) {
		return false
	}
	if host.OSVersion == "" || image.OSVersion == "" {
		return true
	}
	if p.rules == rulesV02 {
		return compat17(lenientVersion(host.OSVersion), lenientVersion(image.OSVersion))
	}
	hv, iv := strictVersion(host.OSVersion), strictVersion(image.OSVersion)
	if hv == (Version{}) {
		return true
	}
	if p.rules == rulesRC1 {
		return compat17(hv, iv)
	}
	return compatLTSCFloor(hv, iv)
}

// featuresSubset is rc.4's os.features rule: after one "win32k" is removed,
// every image feature must be among the host's.
func featuresSubset(image, host []string) bool {
	if i := slices.Index(image, "win32k"); i >= 0 {
		image = slices.Delete(slices.Clone(image), i, i+1)
	}
	for _, f := range image {
		if !slices.Contains(host, f) {
			return false
		}
	}
	return true
}

// Select runs images.Manifest with the profile's comparer: keep the entries
// that match or have no platform, sort them stably (entries without a
// platform last), take the first, and judge an entry without a platform
// by its config.
func (p ContainerdProfile) Select(host Platform, cands []Candidate) int {
	if host.OS != "windows" {
		mc := platforms.Only(ToSpec(host))
		match := func(x Platform) bool { return mc.Match(ToSpec(x)) }
		return selectSorted(cands, match, match, func(a, b Platform) bool { return mc.Less(ToSpec(a), ToSpec(b)) })
	}
	less := func(a, b Platform) bool {
		ta, tb := p.tier(host, a), p.tier(host, b)
		if ta >= 0 && tb >= 0 {
			if p.rank == rankString {
				return a.OSVersion > b.OSVersion
			}
			// rc.4's orderedPlatformComparer.Less: at the same tier, the
			// entry with more os.features first.
			if ta == tb && p.rules == rulesRC4 {
				return len(a.OSFeatures) > len(b.OSFeatures)
			}
			return ta < tb
		}
		return ta >= 0 && tb < 0
	}
	match := func(x Platform) bool { return p.Match(host, x) }
	config := match
	if p.osArchConfig {
		config = func(x Platform) bool { return match(Platform{OS: x.OS, Architecture: x.Architecture}) }
	}
	return selectSorted(cands, match, config, less)
}

// strictVersion parses as rc.1 and later's getWindowsOSVersion: at least
// three parts, major and minor within 8 bits and the build within 16, or
// the zero version.
func strictVersion(s string) Version {
	if strings.Count(s, ".") < 2 {
		return Version{}
	}
	parts := strings.SplitN(s, ".", 4)
	var n [3]uint64
	for i, bits := range []int{8, 8, 16} {
		v, err := strconv.ParseUint(parts[i], 10, bits)
		if err != nil {
			return Version{}
		}
		n[i] = v
	}
	return Version{Major: uint32(n[0]), Minor: uint32(n[1]), Build: uint32(n[2])}
}

// compatLTSCFloor is rc.2 to rc.4's checkWindowsHostAndContainerCompat:
// hosts below 20348 need the same build; otherwise the floor is the
// largest LTSC strictly below the host (20348 for a 20348 host).
func compatLTSCFloor(host, ctr Version) bool {
	if host.Major != ctr.Major || host.Minor != ctr.Minor {
		return false
	}
	const ltsc2022, ltsc2025 = 20348, 26100
	if host.Build < ltsc2022 {
		return host.Build == ctr.Build
	}
	floor := uint32(ltsc2022)
	if host.Build > ltsc2025 {
		floor = ltsc2025
	}
	return floor <= ctr.Build && ctr.Build <= host.Build
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

// compat17 is v0.2.1's checkHostAndContainerCompat (kept by rc.0 and rc.1):
// LTSC list [20348], so the floor is 20348 for every host from 20348 on.
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

// RanksByString reports whether the engine orders several matches by
// os.version compared as strings (windowsMatchComparer), so that
// 10.0.26100.9999 sorts above 10.0.26100.33674.
func RanksByString(e Engine) bool {
	p, ok := e.(ContainerdProfile)
	return ok && p.rank == rankString
}

// RanksByIndexOrder reports whether the engine runs the first compatible
// entry in index order (platforms.Only's comparer), so that an index that
// lists an older build first runs it.
func RanksByIndexOrder(e Engine) bool {
	p, ok := e.(ContainerdProfile)
	return ok && p.rank == rankIndex
}
