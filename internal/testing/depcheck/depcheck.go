// Package depcheck tests imgctl's architecture: which packages may import
// which, directly or through others, and which may talk HTTP or build
// go-containerregistry remote options, as go-containerregistry's own
// depcheck test pins its layers. What may import what comes from the
// tables of docs/architecture.md (ParseArchitecture). It reads the source
// with go/parser; it runs nothing.
package depcheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
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

// Own returns the module's packages that p imports directly, as paths
// relative to the module, sorted.
func (p *Package) Own(module string) []string {
	var out []string
	for _, ip := range p.Imports {
		if rel, ok := strings.CutPrefix(ip, module+"/"); ok {
			out = append(out, rel)
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// Closure returns every package of the module that the package at from
// imports, directly or through others, as the non-test files of each
// import them: for each, the shortest chain of imports that reaches it
// ([from, ..., it]). A package that pkgs lacks is reached but not
// followed; from itself is left out, even on a cycle.
func Closure(pkgs map[string]*Package, module, from string) map[string][]string {
	out := map[string][]string{}
	queue := [][]string{{from}}
	for len(queue) > 0 {
		chain := queue[0]
		queue = queue[1:]
		p := pkgs[chain[len(chain)-1]]
		if p == nil {
			continue
		}
		for _, dep := range p.Own(module) {
			if _, seen := out[dep]; seen || dep == from {
				continue
			}
			next := append(slices.Clip(chain), dep)
			out[dep] = next
			queue = append(queue, next)
		}
	}
	return out
}

// LinksOnly is a rule that each package matched by who imports, directly
// or through others, only the module's packages imported for which
// ok(package, imported) holds. A violation names the chain of imports
// that links the package.
func LinksOnly(module string, who func(string) bool, ok func(pkg, imported string) bool) func(map[string]*Package) []string {
	return func(pkgs map[string]*Package) []string {
		var out []string
		for _, p := range sorted(pkgs) {
			if !who(p.Path) {
				continue
			}
			reach := Closure(pkgs, module, p.Path)
			for _, dep := range slices.Sorted(maps.Keys(reach)) {
				if ok(p.Path, dep) {
					continue
				}
				v := fmt.Sprintf("%s imports %s", p.Path, dep)
				if chain := reach[dep]; len(chain) > 2 {
					v += " (" + strings.Join(chain, " → ") + ")"
				}
				out = append(out, v)
			}
		}
		return out
	}
}

// ImportsOnly is a rule that the packages matched by who import, directly
// or through others, of the module's own packages only those in allowed.
func ImportsOnly(module string, who func(string) bool, allowed ...string) func(map[string]*Package) []string {
	return LinksOnly(module, who, func(_, dep string) bool { return slices.Contains(allowed, dep) })
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
