package platform

import (
	"github.com/containerd/platforms"
)

// ContainerdEngine is containerd 2.x (github.com/containerd/platforms
// v1.0.0-rc.2 and later): stable-ABI LTSC matching, and among several
// matches the greatest os.version compared as a string.
type ContainerdEngine struct{}

// Name returns "containerd".
func (ContainerdEngine) Name() string { return Containerd }

// Match uses the matcher containerd's Default() gives on the host, the one
// Select uses: on Linux it accepts compatible variants (arm/v7 on arm64).
func (ContainerdEngine) Match(host, image Platform) bool {
	return containerdComparer(host).Match(ToSpec(image))
}

// Select reproduces images.Manifest with platforms.Default() as a Windows
// node builds it.
func (e ContainerdEngine) Select(host Platform, cands []Candidate) int {
	mc := containerdComparer(host)
	return selectSorted(host, cands,
		func(p Platform) bool { return mc.Match(ToSpec(p)) },
		func(a, b Platform) bool { return mc.Less(ToSpec(a), ToSpec(b)) })
}

// containerdComparer returns the MatchComparer containerd's Default() gives
// on a node of the host platform. For Linux hosts that is platforms.Only.
// For Windows hosts containerd wraps its matcher in an unexported
// windowsMatchComparer that platforms only constructs when compiled for
// Windows, so the Less below restates its four lines (compare
// platform_windows_compat.go in github.com/containerd/platforms): both match
// means greater os.version AS A STRING first. TestContainerdComparerLess runs
// the upstream TestWindowsMatchComparerLess table against it.
func containerdComparer(host Platform) platforms.MatchComparer {
	if host.OS != "windows" {
		return platforms.Only(ToSpec(host))
	}
	return windowsComparer{Matcher: platforms.NewMatcher(ToSpec(host))}
}

type windowsComparer struct {
	platforms.Matcher
}

func (c windowsComparer) Less(p1, p2 specsPlatform) bool {
	m1, m2 := c.Match(p1), c.Match(p2)
	if m1 && m2 {
		return p1.OSVersion > p2.OSVersion
	}
	return m1 && !m2
}
