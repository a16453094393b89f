package platform

import (
	"sort"
	"strconv"
	"strings"

	"github.com/containerd/platforms"
)

// Docker is the profile of Docker Engine's classic image store.
const Docker = "docker"

// DockerEngine is Docker Engine's classic image store on Windows
// (distribution/pull_v2_windows.go in moby): it drops only builds newer than
// the host, moves entries whose build equals the host's to the front, and
// otherwise keeps list order, so it may pick an image that then fails to
// start. Moby is not a dependency, so the rules are restated here.
type DockerEngine struct{}

// Name returns "docker".
func (DockerEngine) Name() string { return Docker }

// Match keeps an image of the host's os and architecture unless its build is
// newer than the host's.
func (DockerEngine) Match(host, image Platform) bool {
	if host.OS != "windows" {
		return platforms.Only(ToSpec(host)).Match(ToSpec(image))
	}
	// moby compares the OS name case-insensitively (strings.EqualFold).
	if !strings.EqualFold(image.OS, "windows") || image.Architecture != host.Architecture {
		return false
	}
	parts := strings.Split(image.OSVersion, ".")
	if len(parts) >= 3 {
		if b, err := strconv.Atoi(parts[2]); err == nil && host.OSVersion != "" {
			return b <= int(lenientVersion(host.OSVersion).Build)
		}
	}
	return true
}

// Select applies Docker's filter and stable sort. Docker's manifest list
// platform is a struct, so an entry without one has an empty os and never
// matches a Windows host.
func (e DockerEngine) Select(host Platform, cands []Candidate) int {
	if host.OS != "windows" {
		return profileContainerd.Select(host, cands)
	}
	var idx []int
	for i, c := range cands {
		if c.Platform != nil && e.Match(host, *c.Platform) {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return -1
	}
	prefix := lenientVersion(host.OSVersion).BuildPrefix() + "."
	exact := func(i int) bool { return strings.HasPrefix(cands[i].Platform.OSVersion, prefix) }
	sort.SliceStable(idx, func(i, j int) bool { return exact(idx[i]) && !exact(idx[j]) })
	return idx[0]
}
