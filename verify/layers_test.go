package verify

import (
	"slices"
	"testing"
)

// TestLayerLayout judges tar entry names as a Windows layer import places
// them: BuildKit's roots without a slash and other tools' with one, the
// three trees, and whiteouts only under Files/.
func TestLayerLayout(t *testing.T) {
	ok := []string{
		"Files", "Hives", "Files/", "Hives/", "UtilityVM/", "UtilityVM/Files/x.dll",
		"Files/app/app.exe", "Hives/Software_Delta", "Files/app/.wh.old.exe", "Files/app/.wh..wh..opq",
	}
	bad := []string{
		"app/app.exe", "app/", "app", ".wh.app", "Hives/.wh.Software_Delta", "UtilityVM/.wh.x",
		"Windows/System32/cmd.exe", "./Files/app.exe", "/Files/app.exe", "files/app.exe",
	}
	var l LayerLayout
	for _, n := range append(slices.Clone(ok), bad...) {
		l.Add(n)
	}
	if l.Entries != len(ok)+len(bad) || l.Count != len(bad) || !slices.Equal(l.Bad, bad[:MaxBadEntries]) {
		t.Errorf("layout %+v, want %d entries, %d bad, the first %d of %q", l, len(ok)+len(bad), len(bad), MaxBadEntries, bad)
	}
}
