package patchlevel

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// revisionTag is how one revision of a build can be read: its
// 10.0.BUILD.REV tag (MCR's: an index) and the architecture's twin
// 10.0.BUILD.REV-ARCH (an image manifest, one read less), either may be
// missing.
type revisionTag struct {
	revision uint32
	tag      string
	twin     string
}

// revisionTags returns the revisions of build in tags, lowest first. A tag
// is 10.0.BUILD.REV, or its twin with "-"+arch; other builds, other
// architectures' twins and other tags (the moving ltsc2022, servercore
// variants) are not revisions.
func revisionTags(tags []string, build uint32, arch string) []revisionTag {
	prefix := fmt.Sprintf("10.0.%d.", build)
	byRev := map[uint32]*revisionTag{}
	for _, t := range tags {
		rest, ok := strings.CutPrefix(t, prefix)
		if !ok {
			continue
		}
		num, suffix, twin := strings.Cut(rest, "-")
		if twin && !strings.EqualFold(suffix, arch) {
			continue
		}
		rev, err := strconv.ParseUint(num, 10, 32)
		if err != nil || strconv.FormatUint(rev, 10) != num {
			continue
		}
		rt := byRev[uint32(rev)]
		if rt == nil {
			rt = &revisionTag{revision: uint32(rev)}
			byRev[uint32(rev)] = rt
		}
		if twin {
			rt.twin = t
		} else {
			rt.tag = t
		}
	}
	out := make([]revisionTag, 0, len(byRev))
	for _, r := range slices.Sorted(maps.Keys(byRev)) {
		out = append(out, *byRev[r])
	}
	return out
}
