package depcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Graph is the import graph of a module's packages and everything they
// link, for one set of build tags, as the go command resolves it.
type Graph struct {
	// Module is the module's path.
	Module string
	// Build is the build configuration the graph was loaded with.
	Build Build
	// Packages are every package of the module and every package they
	// link, by import path.
	Packages map[string]*Package
}

// Package is what the rules look at of one package: its non-test files
// for the graph's build tags.
type Package struct {
	// ImportPath is the package's full import path.
	ImportPath string
	// Name is the package's name.
	Name string
	// Own is true for a package of the module.
	Own bool
	// Imports are the import paths of its non-test files.
	Imports []string
	// Refs are the qualified names its non-test files refer to (calls and
	// other uses), for the module's packages only.
	Refs []Ref
}

// Ref is one qualified name a package refers to.
type Ref struct {
	// Name is "importpath.Name", such as
	// "github.com/google/go-containerregistry/pkg/v1/remote.Write".
	Name string
	// Pos is where, as file:line relative to the module root.
	Pos string
}

// Build is one build configuration: a target operating system and build
// tags.
type Build struct {
	// GOOS is the target operating system; "" is the host's.
	GOOS string
	// Tags are the build tags; none is the default set.
	Tags []string
}

// String returns the configuration as the go command's environment and
// flags say it ("GOOS=windows -tags nokubernetes"), "" for the default.
func (b Build) String() string {
	var s []string
	if b.GOOS != "" {
		s = append(s, "GOOS="+b.GOOS)
	}
	if len(b.Tags) > 0 {
		s = append(s, "-tags "+strings.Join(b.Tags, ","))
	}
	return strings.Join(s, " ")
}

// listed is what Load reads of one package from go list -json.
type listed struct {
	ImportPath string
	Name       string
	Dir        string
	Standard   bool
	GoFiles    []string
	CgoFiles   []string
	Imports    []string
	Module     *struct {
		Path string
		Main bool
	}
	Error *struct{ Err string }
}

// Load runs go list -deps in dir, the root of a module, for the build
// configuration b, and reads the qualified references of
// the module's packages with go/parser from the files go list selected.
// Test files are not part of the graph.
func Load(dir string, b Build) (*Graph, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	args := []string{"list", "-deps", "-json=ImportPath,Name,Dir,Standard,GoFiles,CgoFiles,Imports,Module,Error"}
	if len(b.Tags) > 0 {
		args = append(args, "-tags", strings.Join(b.Tags, ","))
	}
	cmd := exec.Command("go", append(args, "./...")...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if b.GOOS != "" {
		cmd.Env = append(cmd.Env, "GOOS="+b.GOOS)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s go %s in %s: %w\n%s", b, strings.Join(args, " "), dir, err, stderr.Bytes())
	}
	g := &Graph{Build: b, Packages: map[string]*Package{}}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var l listed
		if err := dec.Decode(&l); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("reading go list's output: %w", err)
		}
		if l.Error != nil {
			return nil, fmt.Errorf("%s: %s", l.ImportPath, l.Error.Err)
		}
		p := &Package{ImportPath: l.ImportPath, Name: l.Name, Own: l.Module != nil && l.Module.Main, Imports: l.Imports}
		if p.Own {
			g.Module = l.Module.Path
		}
		g.Packages[p.ImportPath] = p
		if p.Own {
			if err := g.readRefs(dir, p, l); err != nil {
				return nil, err
			}
		}
	}
	if g.Module == "" {
		return nil, fmt.Errorf("go list in %s listed no package of the main module", dir)
	}
	return g, nil
}

// readRefs records the qualified names p's files refer to. The local name
// of an import is the one its spec gives, else the imported package's
// name, which go list has read.
func (g *Graph) readRefs(root string, p *Package, l listed) error {
	for _, f := range append(slices.Clone(l.GoFiles), l.CgoFiles...) {
		file := filepath.Join(l.Dir, f)
		fset := token.NewFileSet()
		af, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		names := map[string]string{} // local name -> import path
		for _, is := range af.Imports {
			ip, err := strconv.Unquote(is.Path.Value)
			if err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			local := ""
			if dep := g.Packages[ip]; dep != nil {
				local = dep.Name
			}
			if is.Name != nil {
				local = is.Name.Name
			}
			names[local] = ip
		}
		rel, err := filepath.Rel(root, file)
		if err != nil {
			return err
		}
		ast.Inspect(af, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok {
				if ip, ok := names[id.Name]; ok && id.Name != "" && id.Name != "_" && id.Name != "." {
					pos := fmt.Sprintf("%s:%d", filepath.ToSlash(rel), fset.Position(sel.Pos()).Line)
					p.Refs = append(p.Refs, Ref{Name: ip + "." + sel.Sel.Name, Pos: pos})
				}
			}
			return true
		})
	}
	return nil
}

// Rel returns the path of the import path ip relative to the module, and
// whether ip is the module's.
func (g *Graph) Rel(ip string) (string, bool) {
	if ip == g.Module {
		return ".", true
	}
	return strings.CutPrefix(ip, g.Module+"/")
}

// Path returns the import path of the module's package at rel.
func (g *Graph) Path(rel string) string {
	if rel == "." {
		return g.Module
	}
	return g.Module + "/" + rel
}

// Short returns ip as the rules name it: relative to the module for the
// module's packages, else whole.
func (g *Graph) Short(ip string) string {
	if rel, ok := g.Rel(ip); ok {
		return rel
	}
	return ip
}

// Own returns the module's packages, sorted by import path.
func (g *Graph) Own() []*Package {
	var out []*Package
	for _, p := range g.Packages {
		if p.Own {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ImportPath < out[j].ImportPath })
	return out
}

// Reach returns every package the package at import path from links,
// directly or through others, in the order of a breadth-first walk of
// the imports (nearest first, then by import path), each with the
// shortest chain of imports that reaches it ([from, ..., it]). follow
// says whether to walk on from a package reached (nil: always). from
// itself is left out, even on a cycle.
func (g *Graph) Reach(from string, follow func(ip string) bool) (order []string, chains map[string][]string) {
	chains = map[string][]string{}
	queue := [][]string{{from}}
	for len(queue) > 0 {
		chain := queue[0]
		queue = queue[1:]
		p := g.Packages[chain[len(chain)-1]]
		if p == nil || (len(chain) > 1 && follow != nil && !follow(p.ImportPath)) {
			continue
		}
		for _, dep := range slices.Sorted(slices.Values(p.Imports)) {
			if _, seen := chains[dep]; seen || dep == from {
				continue
			}
			next := append(slices.Clip(chain), dep)
			chains[dep] = next
			order = append(order, dep)
			queue = append(queue, next)
		}
	}
	return order, chains
}

// Chain formats a chain of import paths as "verify -> github.com/x -> net/http".
func (g *Graph) Chain(chain []string) string {
	short := make([]string, len(chain))
	for i, ip := range chain {
		short[i] = g.Short(ip)
	}
	return strings.Join(short, " -> ")
}
