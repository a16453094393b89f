package buildtest

import (
	"io/fs"
	"path"
	"path/filepath"
	"strings"
)

// goTools are the pkg/tool/linux_amd64 programs that `go build` runs.
var goTools = map[string]bool{"asm": true, "cgo": true, "compile": true, "link": true}

// skipGOROOT tells whether rel (slash-separated, relative to GOROOT) is left
// out of the toolchain layer: tests, docs, the cmd sources and other tools.
func skipGOROOT(rel string, dir bool) bool {
	first, rest, _ := strings.Cut(rel, "/")
	base := path.Base(rel)
	switch {
	case base == "testdata" || strings.HasSuffix(base, "_test.go"):
		return true
	case first == "src":
		return rest == "cmd"
	case first == "pkg":
		if rest == "" || rest == "tool" || rest == "tool/linux_amd64" || rest == "include" || strings.HasPrefix(rest, "include/") {
			return false
		}
		dirName, tool, ok := strings.Cut(rest, "/")
		if dirName != "tool" || !ok {
			return true
		}
		arch, prog, ok := strings.Cut(tool, "/")
		return arch != "linux_amd64" || (ok && !goTools[prog]) || (!ok && !dir)
	case first == "bin":
		return rest != "" && rest != "go"
	case rel == "VERSION" || rel == "go.env":
		return false
	}
	return true // api, doc, lib, misc, test and top-level files
}

// addGOROOT writes the trimmed toolchain under usr/local/go, in lexical order.
func addGOROOT(w tarWriter, goroot string) error {
	for _, d := range []string{"usr", "usr/local"} {
		if err := w.dir(d, 0o755); err != nil {
			return err
		}
	}
	return filepath.WalkDir(goroot, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(goroot, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		name := "usr/local/go"
		if rel != "." {
			name += "/" + rel
			if skipGOROOT(rel, e.IsDir()) {
				if e.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
		}
		fi, err := e.Info()
		if err != nil {
			return err
		}
		switch {
		case e.IsDir():
			return w.dir(name, int64(fi.Mode().Perm()))
		case fi.Mode().IsRegular():
			return w.copyFile(name, p, fi)
		}
		return nil // no symlinks or devices in a Go distribution
	})
}
