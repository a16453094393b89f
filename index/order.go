package index

import (
	"cmp"
	"slices"
	"strings"

	"github.com/imgctl/imgctl/platform"
)

// Ranks of the index order; see the package documentation.
const (
	rankLinux = iota
	rankWindows
	rankOther
)

func rank(e *Entry) int {
	switch p := e.Descriptor.Platform; {
	case p == nil:
		return rankOther
	case p.OS == "linux":
		return rankLinux
	case p.OS == "windows":
		return rankWindows
	}
	return rankOther
}

// sortImages sorts image entries in place: linux, windows newest first,
// then other OS.
func sortImages(es []*Entry) {
	slices.SortStableFunc(es, compareImages)
}

func compareImages(a, b *Entry) int {
	ra, rb := rank(a), rank(b)
	if c := cmp.Compare(ra, rb); c != 0 {
		return c
	}
	pa, pb := a.Descriptor.Platform, b.Descriptor.Platform
	if pa != nil && pb != nil {
		if ra == rankWindows {
			if c := platform.CompareNewestFirst(pa.OSVersion, pb.OSVersion); c != 0 {
				return c
			}
		}
		if c := cmp.Or(
			cmp.Compare(pa.OS, pb.OS),
			cmp.Compare(pa.Architecture, pb.Architecture),
			cmp.Compare(pa.Variant, pb.Variant),
			cmp.Compare(pa.OSVersion, pb.OSVersion),
		); c != 0 {
			return c
		}
	} else if c := cmp.Compare(boolInt(pa != nil), boolInt(pb != nil)); c != 0 {
		return c // entries without a platform first among other OS
	}
	return cmp.Or(
		cmp.Compare(a.Descriptor.Digest.String(), b.Descriptor.Digest.String()),
		cmp.Compare(platform.FormatPtr(a.Descriptor.Platform), platform.FormatPtr(b.Descriptor.Platform)),
		cmp.Compare(featureString(a), featureString(b)),
	)
}

// sortAttestations orders attestations by the position of their subject in
// images, then by digest.
func sortAttestations(atts, images []*Entry) {
	pos := map[string]int{}
	for i, e := range images {
		if _, ok := pos[e.Descriptor.Digest.String()]; !ok {
			pos[e.Descriptor.Digest.String()] = i
		}
	}
	at := func(e *Entry) int {
		if h, ok := e.Subject(); ok {
			if p, ok := pos[h.String()]; ok {
				return p
			}
		}
		return len(images)
	}
	slices.SortStableFunc(atts, func(a, b *Entry) int {
		return cmp.Or(cmp.Compare(at(a), at(b)), cmp.Compare(a.Descriptor.Digest.String(), b.Descriptor.Digest.String()))
	})
}

func featureString(e *Entry) string {
	if e.Descriptor.Platform == nil {
		return ""
	}
	return strings.Join(e.Descriptor.Platform.OSFeatures, ",")
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
