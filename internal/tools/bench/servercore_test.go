package main

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

func TestParseByteSize(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "4096": 4096, "64MiB": 64 << 20, "2GiB": 2 << 30, "1.5GiB": 3 << 29, "10KB": 10_000,
		"3 MB": 3_000_000, "7B": 7, "1TiB": 1 << 40,
	} {
		if got, err := parseByteSize(in); err != nil || got != want {
			t.Errorf("parseByteSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MiB", "-1GiB", "2 gigabytes", "1e30GiB"} {
		if _, err := parseByteSize(in); err == nil {
			t.Errorf("parseByteSize(%q): no error", in)
		}
	}
	for n, want := range map[int64]string{2 << 30: "2GiB", 64 << 20: "64MiB", 3 << 10: "3KiB", 1536: "1536", 1000: "1000"} {
		if b := byteSize(n); b.String() != want {
			t.Errorf("byteSize(%d).String() = %q, want %q", n, b.String(), want)
		}
	}
}

func TestServercoreSelected(t *testing.T) {
	for in, want := range map[string]bool{"": false, coldCase: false, servercoreCase: true,
		"build-linux," + servercoreCase: true, servercoreCase + "x": false} {
		if got := servercoreSelected(in); got != want {
			t.Errorf("servercoreSelected(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestServercorePlan(t *testing.T) {
	plans, err := servercorePlan(scDefaultSize, scDefaultEntries, scLayers)
	if err != nil {
		t.Fatal(err)
	}
	if len(plans) != 2 {
		t.Fatalf("%d layers, want 2", len(plans))
	}
	var entries int
	var bytes int64
	for i, p := range plans {
		entries += p.entries()
		bytes += p.Bytes
		if p.Links == 0 || p.components() < 1 || p.Files <= len(scHiveFiles) {
			t.Errorf("layer %d: plan %+v lacks links, components or files", i, p)
		}
	}
	if entries != scDefaultEntries || bytes != scDefaultSize {
		t.Errorf("plans add up to %d entries and %d bytes, want %d and %d", entries, bytes, scDefaultEntries, scDefaultSize)
	}
	if plans[0].Bytes <= plans[1].Bytes {
		t.Errorf("the base layer (%d bytes) is not the larger", plans[0].Bytes)
	}
	if _, err := servercorePlan(1<<20, 300, 2); err == nil {
		t.Error("300 entries over 2 layers: no error")
	}
}

func TestScFileSize(t *testing.T) {
	for _, c := range []struct {
		total int64
		files int
	}{{scDefaultSize, 70_000}, {12345, 17}, {0, 5}, {3, 40}} {
		var sum, lo, hi int64
		lo = c.total
		for i := range c.files {
			n := scFileSize(c.total, c.files, i)
			if n < 0 {
				t.Fatalf("scFileSize(%d, %d, %d) = %d", c.total, c.files, i, n)
			}
			sum += n
			lo, hi = min(lo, n), max(hi, n)
		}
		if sum != c.total {
			t.Errorf("%d files of %d bytes add up to %d", c.files, c.total, sum)
		}
		if c.total > int64(c.files)*100 && hi < 10*lo {
			t.Errorf("%d files of %d bytes: sizes %d–%d do not vary", c.files, c.total, lo, hi)
		}
	}
}

// TestWriteServercoreLayer writes a small layer and reads it back: its
// digests, the Windows layout and hard links to earlier files.
func TestWriteServercoreLayer(t *testing.T) {
	p := scLayerPlan{Dirs: len(scFixedDirs) + 3, Files: 120, Links: 15, Bytes: 300_000}
	dir := t.TempDir()
	write := func(name string) scLayerFile {
		f, err := writeServercoreLayer(filepath.Join(dir, name), 1, p, rand.NewChaCha8([32]byte{1}))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	f := write("a.tar.gz")
	if g := write("b.tar.gz"); g.digest != f.digest || g.diffID != f.diffID {
		t.Error("the same seed wrote different layers")
	}
	raw, err := os.ReadFile(f.path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%x", sha256.Sum256(raw)); got != f.digest.Hex || int64(len(raw)) != f.size {
		t.Errorf("file sha256 %s, %d bytes; recorded %s, %d", got, len(raw), f.digest.Hex, f.size)
	}
	if f.size < p.Bytes {
		t.Errorf("compressed %d bytes, less than the %d content bytes", f.size, p.Bytes)
	}
	rc, err := scLayer{f}.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	diff := sha256.New()
	tr := tar.NewReader(io.TeeReader(rc, diff))
	regular := map[string]bool{}
	var names []string
	var links int
	var content int64
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if !strings.HasPrefix(h.Name, "Files") && !strings.HasPrefix(h.Name, "Hives") {
			t.Errorf("entry %s outside Files and Hives", h.Name)
		}
		if h.PAXRecords[regtest.PAXFileAttr] == "" || h.PAXRecords[regtest.PAXCreationTime] == "" {
			t.Errorf("entry %s lacks the MSWINDOWS PAX records: %v", h.Name, h.PAXRecords)
		}
		switch h.Typeflag {
		case tar.TypeReg:
			regular[h.Name] = true
			content += h.Size
		case tar.TypeLink:
			links++
			if !regular[h.Linkname] {
				t.Errorf("hard link %s to %s, not an earlier file of the layer", h.Name, h.Linkname)
			}
		}
		if _, err := io.Copy(io.Discard, tr); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := io.Copy(io.Discard, rc); err != nil { // the tar's end padding
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%x", diff.Sum(nil)); got != f.diffID.Hex {
		t.Errorf("diffID %s, recorded %s", got, f.diffID.Hex)
	}
	if len(names) != p.entries() || len(regular) != p.Files || links != p.Links || content != p.Bytes {
		t.Errorf("%d entries, %d files, %d links, %d content bytes; want %d, %d, %d, %d",
			len(names), len(regular), links, content, p.entries(), p.Files, p.Links, p.Bytes)
	}
	if len(names) < 2 || names[0] != "Hives" || names[1] != "Files" {
		t.Errorf("the layer does not start with the Hives and Files roots: %v", names[:min(2, len(names))])
	}
}

func TestServercoreBase(t *testing.T) {
	img, files, err := servercoreBase(t.TempDir(), 1<<20, 800, [32]byte{2}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != "windows" || cf.OSVersion != regtest.OSVersionLTSC2025 || len(cf.RootFS.DiffIDs) != 2 {
		t.Errorf("config: os %s, os.version %s, %d diff IDs", cf.OS, cf.OSVersion, len(cf.RootFS.DiffIDs))
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range m.Layers {
		if l.Digest != files[i].digest || l.Size != files[i].size || cf.RootFS.DiffIDs[i] != files[i].diffID {
			t.Errorf("layer %d: manifest %v, config %v; files %v %v", i, l, cf.RootFS.DiffIDs[i], files[i].digest, files[i].diffID)
		}
	}
	if s := scLayerSummary(files); !strings.Contains(s, "layer 2:") || !strings.Contains(s, "hard links") {
		t.Errorf("summary %q", s)
	}
}

func TestParseStatusKiB(t *testing.T) {
	status := "Name:\tbuildkitd\nVmPeak:\t 2000 kB\nVmHWM:\t  123456 kB\nVmRSS:\t 1000 kB\n"
	if got, err := parseStatusKiB(status, "VmHWM"); err != nil || got != 123456 {
		t.Errorf("parseStatusKiB VmHWM = %d, %v", got, err)
	}
	if got, err := parseStatusKiB(status, "VmRSS"); err != nil || got != 1000 {
		t.Errorf("parseStatusKiB VmRSS = %d, %v", got, err)
	}
	if _, err := parseStatusKiB("Name:\tx\n", "VmHWM"); err == nil {
		t.Error("no VmHWM: no error")
	}
	if !argPair([]string{"buildkitd", "--root", "/r", "--addr", "unix:///r/s"}, "--addr", "unix:///r/s") ||
		argPair([]string{"buildkitd", "--addr"}, "--addr", "x") || argPair([]string{"--root", "x"}, "--addr", "x") {
		t.Error("argPair")
	}
}

func TestRepoSlug(t *testing.T) {
	for in, want := range map[string]string{"imgctl": "imgctl", "imgctl --windows-plain": "imgctl-windows-plain",
		"imgctl+registry-skeleton (157 MiB base)": "imgctl-registry-skeleton-157-mib-base", "crane blob | gzip -dc": "crane-blob-gzip-dc"} {
		if got := repoSlug(in); got != want {
			t.Errorf("repoSlug(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPeakRSS(t *testing.T) {
	var none *peakRSS
	none.observe(nil) // no panic
	p := &peakRSS{}
	p.observe(nil)
	if p.take() != 0 {
		t.Error("nothing observed, peak not 0")
	}
}

// TestServercoreReport renders a made-up run: the goals' verdicts and
// what the section says about sizes and caches.
func TestServercoreReport(t *testing.T) {
	rows, err := scRows(t.TempDir(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	walls := map[string]time.Duration{scRowFirst: 11 * time.Second, scRowRegistry: 2 * time.Second,
		"imgctl --windows-plain": 30 * time.Second, scRowBuildctl: 40 * time.Second,
		scRowReadBase: 10 * time.Second, scRowSmall: 1 * time.Second}
	for _, r := range rows {
		for i := range 3 {
			run := scRun{coldRun: coldRun{sample: sample{Wall: walls[r.name] + time.Duration(i)*time.Millisecond}}, clientKiB: 50_000}
			if r.name == scRowRegistry {
				run.baseRead = 42
			}
			r.runs = append(r.runs, run)
		}
	}
	rep := &scReport{runs: 3, size: 64 << 20, entries: 5000, rows: rows, base: scBase{ref: "127.0.0.1:5000/bases/servercore:ltsc2025"}}
	gs := rep.goals()
	if len(gs) != 3 || !gs[0].ok || !gs[1].ok || gs[2].ok {
		t.Fatalf("goals: %+v", gs)
	}
	if !strings.Contains(gs[2].detail, "2.00×") || !strings.Contains(gs[2].detail, "did not take the skeleton") {
		t.Errorf("registry goal detail: %s", gs[2].detail)
	}
	rows[0].runs[1].clientKiB = 100_000 // 102.4 MB
	if rep.goals()[0].ok {
		t.Error("RSS goal passes at 102 MB")
	}
	rep.row(scRowBuildctl).rss.floorKiB = 50_000 // buildctl's 50,000 KiB are the bench's own
	sec := rep.section(context.Background())
	for _, want := range []string{"| crane blob \\| gzip -dc |", "| buildctl | 40001 ms | 40000 ms–40002 ms | ≤ 51.2 MB (the bench's RSS) |", "-servercore-size 64MiB -servercore-entries 5000", "## " + servercoreCase + ":",
		"HOST/bases/servercore:ltsc2025", "local skeleton cache empty", "registry skeleton cache", "**FAIL**", "11000 ms"} {
		if !strings.Contains(sec, want) {
			t.Errorf("section lacks %q:\n%s", want, sec)
		}
	}
	// writeResults puts the section after the cold case's.
	path := filepath.Join(t.TempDir(), "RESULTS.md")
	br := &buildReport{}
	br.addExtra(servercoreCase, sec, gs)
	br.addExtra(coldCase, "<!-- build-case:"+coldCase+":begin -->\ncold\n<!-- build-case:"+coldCase+":end -->\n", nil)
	if err := writeResults(context.Background(), path, "# index\n", br); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if got := string(b); !strings.Contains(got, "## "+servercoreCase) || strings.Index(got, "\ncold\n") > strings.Index(got, "## "+servercoreCase) {
		t.Errorf("RESULTS.md:\n%s", got)
	}
}
