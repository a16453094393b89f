package enginegolden

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
)

// hostFile is the one file of imgctl's in the copied platforms package: the
// Windows host that the renamed DefaultSpec returns, settable per case.
const hostFile = `package platforms

import specs "github.com/opencontainers/image-spec/specs-go/v1"

var imgctlWindowsHost specs.Platform

// ImgctlSetWindowsHost sets the platform DefaultSpec returns on the
// simulated Windows node.
func ImgctlSetWindowsHost(p specs.Platform) { imgctlWindowsHost = p }
`

// copyPlatforms copies the platforms package in dir to out so that it
// compiles its Windows code on Linux, for a `replace` directive (the go
// command refuses overlays of files in the module cache). Every non-test
// *_windows.go file is written under a name without the GOOS suffix and
// with its build constraint dropped; in it, DefaultSpec's body returns the
// simulated host instead of asking the kernel, DefaultSpec is renamed
// imgctlWindowsDefaultSpec and Default ImgctlWindowsDefault (the Linux ones
// keep their names). A !windows file whose every declaration the Windows
// files now declare (v0.2.1's platforms_other.go) is left out. Every other
// file is copied unchanged, and hostFile is added.
func copyPlatforms(dir, out string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	winNames := map[string]bool{}
	var others []string
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		if !strings.HasSuffix(name, "_windows.go") {
			others = append(others, name)
			continue
		}
		src, names, err := windowsFile(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		for _, n := range names {
			winNames[n] = true
		}
		if err := os.WriteFile(filepath.Join(out, strings.TrimSuffix(name, ".go")+"_imgctl.go"), src, 0o644); err != nil {
			return err
		}
	}
	if !winNames["ImgctlWindowsDefault"] {
		return fmt.Errorf("%s: no Windows Default()", dir)
	}
	for _, name := range append(others, "go.mod") {
		if name != "go.mod" {
			drop, err := shadowed(filepath.Join(dir, name), winNames)
			if err != nil {
				return err
			}
			if drop {
				continue
			}
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, name), b, 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(out, "zz_imgctl_host.go"), []byte(hostFile), 0o644)
}

// windowsFile returns one Windows file of platforms as it is compiled here,
// and its top-level names.
func windowsFile(path string) ([]byte, []string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var lines []string
	for _, l := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(l, "//go:build") || strings.HasPrefix(l, "// +build") {
			continue
		}
		lines = append(lines, l)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, strings.Join(lines, "\n"), parser.ParseComments)
	if err != nil {
		return nil, nil, err
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			if n.Recv == nil && n.Name.Name == "DefaultSpec" {
				n.Body = &ast.BlockStmt{List: []ast.Stmt{&ast.ReturnStmt{Results: []ast.Expr{ast.NewIdent("imgctlWindowsHost")}}}}
			}
		case *ast.Ident:
			switch n.Name {
			case "DefaultSpec":
				n.Name = "imgctlWindowsDefaultSpec"
			case "Default":
				n.Name = "ImgctlWindowsDefault"
			}
		}
		return true
	})
	dropUnusedImports(f)
	var buf bytes.Buffer
	if err := format.Node(&buf, fset, f); err != nil {
		return nil, nil, err
	}
	return buf.Bytes(), topNames(f), nil
}

// dropUnusedImports removes the imports DefaultSpec's old body alone used
// (golang.org/x/sys/windows does not build on Linux).
func dropUnusedImports(f *ast.File) {
	used := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if s, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := s.X.(*ast.Ident); ok {
				used[id.Name] = true
			}
		}
		return true
	})
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.IMPORT {
			continue
		}
		var keep []ast.Spec
		for _, s := range g.Specs {
			is := s.(*ast.ImportSpec)
			name := strings.Trim(is.Path.Value, `"`)
			name = name[strings.LastIndex(name, "/")+1:]
			if is.Name != nil {
				name = is.Name.Name
			}
			if used[name] {
				keep = append(keep, s)
			}
		}
		g.Specs = keep
	}
	f.Imports = nil
}

// topNames lists a file's top-level functions, types, variables and
// constants (not methods).
func topNames(f *ast.File) []string {
	var out []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				out = append(out, d.Name.Name)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					out = append(out, s.Name.Name)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						out = append(out, n.Name)
					}
				}
			}
		}
	}
	return out
}

// shadowed reports whether a non-Windows file must leave the build because
// the Windows files declare what it declares. A file that shares only some
// of its names cannot be resolved this way and is an error.
func shadowed(path string, win map[string]bool) (bool, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments)
	if err != nil {
		return false, err
	}
	names := topNames(f)
	n := 0
	for _, name := range names {
		if win[name] {
			n++
		}
	}
	switch {
	case n == 0:
		return false, nil
	case n == len(names):
		return true, nil
	}
	return false, fmt.Errorf("%s shares some but not all of its declarations with the Windows files", path)
}
