package verify

import (
	"path"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/findings"
	"github.com/imgctl/imgctl/snapshot"
)

// MaxBadEntries is how many offending entry names a windows-layer-layout
// finding names; the rest are counted.
const MaxBadEntries = 5

// LayerLayout judges the tar entries of one layer of a Windows image
// against the layout Microsoft's layer import places under C:\: the roots
// Files and Hives, everything else under Files/, Hives/ or UtilityVM/, and
// whiteouts (.wh. names, the opaque .wh..wh..opq too) only under Files/.
// The zero value is ready; call Add for every entry name as the tar has it.
type LayerLayout struct {
	// Bad are the first MaxBadEntries offending names, in tar order.
	Bad []string
	// Count is how many entries offend.
	Count int
	// Entries is how many entries were judged.
	Entries int
}

// Add judges one tar entry name.
func (l *LayerLayout) Add(name string) {
	l.Entries++
	if inWindowsLayout(name) {
		return
	}
	l.Count++
	if len(l.Bad) < MaxBadEntries {
		l.Bad = append(l.Bad, name)
	}
}

// inWindowsLayout reports whether a tar entry name is where a Windows layer
// import expects it. BuildKit writes the roots without a trailing slash
// (util/winlayers), other tools with one: both are accepted.
func inWindowsLayout(name string) bool {
	n := strings.TrimSuffix(name, "/")
	if strings.HasPrefix(n, "Files/") {
		return true
	}
	if strings.HasPrefix(path.Base(n), ".wh.") {
		return false // a whiteout outside Files/: the import cannot apply it
	}
	switch {
	case n == "Files", n == "Hives", n == "UtilityVM":
		return true
	case strings.HasPrefix(n, "Hives/"), strings.HasPrefix(n, "UtilityVM/"):
		return true
	}
	return false
}

// LayerStats is how much verify --layers read, in the report's JSON as
// "layers": the count of layers and their compressed bytes.
type LayerStats struct {
	Read  int   `json:"read"`
	Bytes int64 `json:"bytes"`
}

// CheckedLayer is the verdict on one layer that was read.
type CheckedLayer struct {
	// Manifest is the image manifest the layer belongs to.
	Manifest v1.Hash
	// Layer is the layer's digest.
	Layer  v1.Hash
	Layout LayerLayout
}

// UncheckedImage is a Windows image whose layers were not read, and why.
type UncheckedImage struct {
	Manifest v1.Hash
	Reason   string
}

// Layers is what the caller read of the Windows images' own layers (those
// not of the base) for EvaluateLayers; package verify reads nothing itself.
type Layers struct {
	Stats     LayerStats
	Checked   []CheckedLayer
	Unchecked []UncheckedImage
}

// EvaluateLayers adds to r the findings of what was read of the layers of
// snapshot s's images (windows-layer-layout, layers-unchecked) and its
// stats, and updates r.Passed.
func EvaluateLayers(r *Report, s *snapshot.Snapshot, l *Layers) {
	c := &checker{s: s, r: r}
	stats := l.Stats
	r.Layers = &stats
	for _, cl := range l.Checked {
		if cl.Layout.Count == 0 {
			continue
		}
		more := ""
		if n := cl.Layout.Count - len(cl.Layout.Bad); n > 0 {
			more = sprintf(" and %d more", n)
		}
		c.add(RuleWindowsLayerLayout, findings.Error, c.byDigest(cl.Manifest),
			"layer %s has %d of %d entries outside the Windows layout (%s%s): a Windows node's layer import places only Files/ under C:\\ "+
				"and applies whiteouts only there, so these files would not appear; BuildKit writes such a layer for a COPY --link or ADD --link "+
				"(lint rule link-in-windows-stage), rebuild without --link",
			cl.Layer, cl.Layout.Count, cl.Layout.Entries, strings.Join(cl.Layout.Bad, ", "), more)
	}
	for _, u := range l.Unchecked {
		c.add(RuleLayersUnchecked, findings.Warning, c.byDigest(u.Manifest), "layers not checked: %s", u.Reason)
	}
	r.Passed = len(r.Errors()) == 0
}

// byDigest returns the snapshot entry of manifest d, or nil.
func (c *checker) byDigest(d v1.Hash) *snapshot.Entry {
	for i := range c.s.Entries {
		if c.s.Entries[i].Descriptor.Digest == d {
			return &c.s.Entries[i]
		}
	}
	return nil
}
