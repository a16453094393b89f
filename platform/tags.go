package platform

import (
	"fmt"
	"strings"
)

// channelTags are the names Microsoft's Windows image tags give a build
// besides the LTSC names of Releases: the old name of Server 2019 (1809),
// Server 2016's LTSC name, and the semi-annual and annual channel releases,
// which run only on hosts of the same build.
var channelTags = []struct {
	name  string
	build uint32
}{
	{"ltsc2016", 14393},
	{"1709", 16299},
	{"1803", 17134},
	{"1809", 17763},
	{"1903", 18362},
	{"1909", 18363},
	{"2004", 19041},
	{"20h2", 19042},
	{"23h2", 25398},
}

// minWindowsBuild is the first Windows 10 build. A dotted tag part below it
// (10.0.100, a .NET 10 SDK version) is not a Windows version.
const minWindowsBuild = 10240

// TagBuild returns the Windows build an image tag names, as Microsoft tags
// its Windows images: a release name (ltsc2019 or its old name 1809,
// ltsc2022, ltsc2025; the annual-channel names such as 20H2 for 19042 and
// 23H2 for 25398), or a full version 10.0.BUILD or 10.0.BUILD.REVISION.
// The name may stand alone or be one dash-separated part of the tag:
// windowsservercore-ltsc2025, 8.0-nanoserver-ltsc2022,
// 10.0.20348.2582-amd64. Case does not matter. It returns false when no
// part names a build (latest, 1.2.3), or when two parts name different
// builds.
func TagBuild(tag string) (uint32, bool) {
	var found uint32
	for part := range strings.FieldsFuncSeq(strings.ToLower(tag), func(r rune) bool { return r == '-' || r == '_' }) {
		b, ok := partBuild(part)
		if !ok {
			continue
		}
		if found != 0 && found != b {
			return 0, false
		}
		found = b
	}
	return found, found != 0
}

// partBuild reads one part of a tag as a release name or a full Windows
// version.
func partBuild(part string) (uint32, bool) {
	for _, r := range Releases {
		if r.Name == part {
			return r.Build, true
		}
	}
	for _, c := range channelTags {
		if c.name == part {
			return c.build, true
		}
	}
	if !strings.HasPrefix(part, "10.0.") {
		return 0, false
	}
	v, err := ParseHostVersion(part)
	if err != nil || v.Build < minWindowsBuild {
		return 0, false
	}
	return v.Build, true
}

// BuildName names a Windows build for messages: its LTSC release
// (ltsc2022) or channel name (20H2) with the number, else the number.
func BuildName(build uint32) string {
	if r, ok := ReleaseForBuild(build); ok {
		return fmt.Sprintf("%d (%s)", build, r.Name)
	}
	if name, ok := ChannelName(build); ok {
		return fmt.Sprintf("%d (%s)", build, name)
	}
	return fmt.Sprint(build)
}

// ChannelName returns the name Microsoft's tags give a build outside the
// LTSC releases of Releases: ltsc2016, 1809, or an upper-case channel
// release such as 20H2 or 23H2.
func ChannelName(build uint32) (string, bool) {
	for _, c := range channelTags {
		if c.build != build {
			continue
		}
		if strings.HasPrefix(c.name, "ltsc") {
			return c.name, true
		}
		return strings.ToUpper(c.name), true
	}
	return "", false
}
