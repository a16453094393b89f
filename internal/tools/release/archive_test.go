package release

import (
	"archive/zip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestArchiveNames pins the asset names the install action downloads.
func TestArchiveNames(t *testing.T) {
	t.Parallel()
	var got []string
	for _, tg := range Targets() {
		got = append(got, ArchiveName("v1.2.0", tg))
	}
	want := []string{
		"imgctl_1.2.0_linux_amd64.tar.gz",
		"imgctl_1.2.0_linux_arm64.tar.gz",
		"imgctl_1.2.0_windows_amd64.zip",
		"imgctl_1.2.0_darwin_arm64.tar.gz",
	}
	if !slices.Equal(got, want) {
		t.Errorf("archive names = %q, want %q", got, want)
	}
	if n := ArchiveName("1.2.0-rc.1", Target{"linux", "amd64"}); n != "imgctl_1.2.0-rc.1_linux_amd64.tar.gz" {
		t.Errorf("version without v: %s", n)
	}
}

// TestArchivesAndChecksums packs a tar.gz and a zip and checks them with
// the tools a user has, tar and sha256sum -c (the zip with archive/zip:
// unzip is not on every machine).
func TestArchivesAndChecksums(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"tar", "sha256sum"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed: %v", tool, err)
		}
	}
	src, dist := t.TempDir(), t.TempDir()
	bin := filepath.Join(src, "imgctl")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho imgctl\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	readme := filepath.Join(src, "README.md")
	if err := os.WriteFile(readme, []byte("# imgctl\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mod := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	var names []string
	for _, tg := range []Target{{"linux", "amd64"}, {"windows", "amd64"}} {
		name := ArchiveName("v1.2.0", tg)
		files := []ArchiveFile{{Name: tg.Binary(), Path: bin, Mode: 0o755}, {Name: "README.md", Path: readme, Mode: 0o644}}
		if err := WriteArchive(filepath.Join(dist, name), files, mod); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}

	out := runIn(t, dist, "tar", "-tvzf", names[0])
	if !strings.Contains(out, "-rwxr-xr-x") || !strings.Contains(out, " imgctl\n") || !strings.Contains(out, "2026-12-01 20:00 README.md") {
		t.Errorf("tar listing:\n%s", out)
	}
	unpacked := t.TempDir()
	runIn(t, dist, "tar", "-xzf", names[0], "-C", unpacked)
	if got := runIn(t, unpacked, "./imgctl"); got != "imgctl\n" {
		t.Errorf("unpacked binary printed %q", got)
	}
	zr, err := zip.OpenReader(filepath.Join(dist, names[1]))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var entries []string
	for _, f := range zr.File {
		entries = append(entries, fmt.Sprintf("%s %v %s", f.Name, f.Mode(), f.Modified.UTC().Format(time.RFC3339)))
	}
	if want := []string{"imgctl.exe -rwxr-xr-x 2026-12-01T20:00:00Z", "README.md -rw-r--r-- 2026-12-01T20:00:00Z"}; !slices.Equal(entries, want) {
		t.Errorf("zip entries = %q, want %q", entries, want)
	}

	if err := WriteChecksums(dist, []string{names[1], names[0]}); err != nil {
		t.Fatal(err)
	}
	sums, err := os.ReadFile(filepath.Join(dist, ChecksumsName))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(sums), "\n"), "\n")
	if len(lines) != 2 || !strings.HasSuffix(lines[0], "  "+names[0]) || !strings.HasSuffix(lines[1], "  "+names[1]) || len(lines[0]) != 64+2+len(names[0]) {
		t.Errorf("checksums.txt is not sha256sum's format, sorted:\n%s", sums)
	}
	if out := runIn(t, dist, "sha256sum", "-c", ChecksumsName); strings.Count(out, ": OK\n") != 2 {
		t.Errorf("sha256sum -c:\n%s", out)
	}
	// A changed archive fails the check.
	if err := os.WriteFile(filepath.Join(dist, names[0]), []byte("tampered"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sha256sum", "-c", ChecksumsName)
	cmd.Dir = dist
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), names[0]+": FAILED") {
		t.Errorf("sha256sum -c passed a tampered archive: %v\n%s", err, out)
	}
}

func runIn(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}
