package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	intoto "github.com/in-toto/in-toto-golang/in_toto"
	spdx "github.com/spdx/tools-golang/spdx/v2/v2_3"
)

// TestRun scans a tree and an extra as BuildKit lays them out and reads
// the statements back: one per tree, SPDX in an in-toto statement, every
// regular file with its sha256, no directory or symlink.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	src, extras, dst := filepath.Join(dir, "src"), filepath.Join(dir, "extras"), filepath.Join(dir, "out")
	for p, content := range map[string]string{
		"src/app/hello.exe":        "MZ hello",
		"src/etc/passwd":           "root:x:0:0",
		"extras/sbom-context/a.go": "package a",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("app/hello.exe", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := run(src, extras, dst); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]map[string]string{
		"sbom.spdx.json":         {"/app/hello.exe": "MZ hello", "/etc/passwd": "root:x:0:0"},
		"sbom-context.spdx.json": {"/a.go": "package a"},
	} {
		dt, err := os.ReadFile(filepath.Join(dst, name))
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			intoto.StatementHeader
			Predicate spdx.Document `json:"predicate"`
		}
		if err := json.Unmarshal(dt, &st); err != nil {
			t.Fatal(err)
		}
		if st.Type != intoto.StatementInTotoV01 || st.PredicateType != intoto.PredicateSPDX || st.Predicate.SPDXVersion != spdx.Version {
			t.Errorf("%s: header %+v, SPDX version %q", name, st.StatementHeader, st.Predicate.SPDXVersion)
		}
		got := map[string]string{}
		for _, f := range st.Predicate.Files {
			got[f.FileName] = f.Checksums[0].Value
		}
		var names []string
		for n, content := range want {
			sum := sha256.Sum256([]byte(content))
			if got[n] != hex.EncodeToString(sum[:]) {
				t.Errorf("%s: %s has sha256 %q", name, n, got[n])
			}
			names = append(names, n)
		}
		if len(got) != len(want) {
			t.Errorf("%s lists %v, want only %v", name, got, names)
		}
	}
	entries, _ := os.ReadDir(dst)
	if len(entries) != 2 || !slices.ContainsFunc(entries, func(e os.DirEntry) bool { return e.Name() == "sbom.spdx.json" }) {
		t.Errorf("output %v", entries)
	}
	if err := run("", "", dst); err == nil {
		t.Error("no source: want an error")
	}
}
