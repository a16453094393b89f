package platform

import (
	"cmp"
	"fmt"
)

// Key identifies a platform for duplicate detection: normalized
// os/arch/variant, plus the build for Windows ("windows/amd64@26100").
func Key(p Platform) string {
	n := Normalize(p)
	k := n.OS + "/" + n.Architecture
	if n.Variant != "" {
		k += "/" + n.Variant
	}
	if n.OS == "windows" && n.OSVersion != "" {
		if b, ok := Build(n.OSVersion); ok {
			k += fmt.Sprintf("@%d", b)
		} else {
			k += "@" + n.OSVersion
		}
	}
	return k
}

// SameOSArch reports whether two platforms have the same normalized os,
// architecture and variant.
func SameOSArch(a, b Platform) bool {
	na, nb := Normalize(a), Normalize(b)
	return na.OS == nb.OS && na.Architecture == nb.Architecture && na.Variant == nb.Variant
}

// SameBuild reports whether have is a variant of what want asks for: the
// same normalized os, architecture and variant and, when want is Windows
// with an os.version, the same Windows build. Revisions are not compared:
// 10.0.26100.2894 and 10.0.26100.33674 are the same build. A want without
// os.version names no build and accepts any; so does a non-Windows want.
// An os.version whose build is unreadable has the same build only as an
// identical string.
//
// This is how imgctl picks a variant of its own (index remove, a base image
// for a build or a rebase), not how an engine matches an image on a host:
// that is Engine.Match.
func SameBuild(want, have Platform) bool {
	nw, nh := Normalize(want), Normalize(have)
	if nw.OS != nh.OS || nw.Architecture != nh.Architecture || nw.Variant != nh.Variant {
		return false
	}
	if nw.OS != "windows" || want.OSVersion == "" || want.OSVersion == have.OSVersion {
		return true
	}
	wb, ok1 := Build(want.OSVersion)
	hb, ok2 := Build(have.OSVersion)
	return ok1 && ok2 && wb == hb
}

// CompareNewestFirst orders Windows os.versions newest first, the order of
// the Windows entries of an index: readable versions (three or four
// numbers) first, numerically greater first (by major, minor, build, then
// revision; a missing revision counts as 0); then missing os.versions ("");
// then unreadable ones. It returns a negative number when a comes before b,
// a positive one when after, and 0 for numerically equal versions, for two
// missing and for two unreadable ones, which the caller orders by other
// means.
//
// It is imgctl's notion of newer, not an engine's: containerd 2.x orders
// by os.version as a string (see ContainerdEngine).
func CompareNewestFirst(a, b string) int {
	va, ea := ParseHostVersion(a)
	vb, eb := ParseHostVersion(b)
	ca, cb := versionClass(a, ea), versionClass(b, eb)
	if c := cmp.Compare(ca, cb); c != 0 || ca != classReadable {
		return c
	}
	return vb.Compare(va)
}

// Classes of os.versions in CompareNewestFirst, in order.
const (
	classReadable = iota
	classMissing
	classUnreadable
)

func versionClass(s string, err error) int {
	switch {
	case s == "":
		return classMissing
	case err != nil:
		return classUnreadable
	}
	return classReadable
}
