// Package depcheck tests imgctl's architecture: which packages may import
// which, and which may talk HTTP or build go-containerregistry remote
// options, as go-containerregistry's own depcheck test pins its layers.
// It reads the source with go/parser; it runs nothing.
package depcheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Package is what the rules look at of one package's non-test files.
type Package struct {
	// Path is the import path relative to the module ("registry",
	// "cmd/imgctl/cli").
	Path string
	// Imports are the import paths of its non-test files.
	Imports []string
	// Calls are the qualified calls and references its non-test files make,
	// as "importpath.Name" (e.g. "github.com/google/go-containerregistry/pkg/v1/remote.WithTransport").
	Calls []string
}

// Load reads every package below root (the module root) whose import path
// is under module, skipping testdata, hidden directories and _test.go
// files.
func Load(root, module string) (map[string]*Package, error) {
	out := map[string]*Package{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "vendor") {
				return filepath.SkipDir
			}
			if p != root {
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir // another module (examples/hello)
				}
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		pkg := out[rel]
		if pkg == nil {
			pkg = &Package{Path: rel}
			out[rel] = pkg
		}
		return parseFile(p, module, pkg)
	})
	for _, p := range out {
		sort.Strings(p.Imports)
		p.Imports = slices.Compact(p.Imports)
		sort.Strings(p.Calls)
		p.Calls = slices.Compact(p.Calls)
	}
	return out, err
}

func parseFile(file, module string, pkg *Package) error {
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		return err
	}
	names := map[string]string{} // local name -> import path
	for _, is := range f.Imports {
		ip, err := strconv.Unquote(is.Path.Value)
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		pkg.Imports = append(pkg.Imports, ip)
		local := path.Base(ip)
		if strings.HasPrefix(local, "v") && len(local) <= 3 { // .../cosign/v2 and the like
			local = path.Base(path.Dir(ip))
		}
		if is.Name != nil {
			local = is.Name.Name
		}
		names[local] = ip
	}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok {
			if ip, ok := names[id.Name]; ok {
				pkg.Calls = append(pkg.Calls, ip+"."+sel.Sel.Name)
			}
		}
		return true
	})
	return nil
}

// Rule is one architectural constraint: a name and a check over every
// package that returns the violations.
type Rule struct {
	Name  string
	Check func(pkgs map[string]*Package) []string
}

// ImportsOnly is a rule that the packages matched by who import, of the
// module's own packages, only those in allowed.
func ImportsOnly(module string, who func(string) bool, allowed ...string) func(map[string]*Package) []string {
	return func(pkgs map[string]*Package) []string {
		var out []string
		for _, p := range sorted(pkgs) {
			if !who(p.Path) {
				continue
			}
			for _, ip := range p.Imports {
				rel, ok := strings.CutPrefix(ip, module+"/")
				if ok && !slices.Contains(allowed, rel) {
					out = append(out, fmt.Sprintf("%s imports %s", p.Path, rel))
				}
			}
		}
		return out
	}
}

// NoneOutside is a rule that no package outside allowed (by path prefix)
// imports or references any of forbidden: an import path, or a qualified
// name "importpath.Name" where a name ending in "*" matches a prefix.
func NoneOutside(allowed []string, forbidden ...string) func(map[string]*Package) []string {
	return func(pkgs map[string]*Package) []string {
		var out []string
		for _, p := range sorted(pkgs) {
			if slices.ContainsFunc(allowed, func(a string) bool { return p.Path == a || strings.HasPrefix(p.Path, a+"/") }) {
				continue
			}
			for _, f := range forbidden {
				for _, x := range append(slices.Clone(p.Imports), p.Calls...) {
					if x == f || (strings.HasSuffix(f, "*") && strings.HasPrefix(x, strings.TrimSuffix(f, "*"))) {
						out = append(out, fmt.Sprintf("%s uses %s", p.Path, x))
					}
				}
			}
		}
		return out
	}
}

func sorted(pkgs map[string]*Package) []*Package {
	out := make([]*Package, 0, len(pkgs))
	for _, p := range pkgs {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}
