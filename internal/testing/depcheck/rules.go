// Package depcheck tests imgctl's architecture, as go-containerregistry's
// own depcheck test pins its layers: which of the module's packages may
// import which, directly or through others; what each must not link of
// other modules and the standard library (the network, cosign, BuildKit, a
// registry client); and that only registry speaks HTTP, builds remote
// options and writes with go-containerregistry's remote package. What may
// import what comes from the tables of docs/architecture.md
// (ParseArchitecture); the import graph comes from go list, once per set
// of build tags (Load). It runs nothing of the module.
package depcheck

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// go-containerregistry's packages that speak to registries.
const (
	GGCRRemote    = "github.com/google/go-containerregistry/pkg/v1/remote"
	GGCRTransport = GGCRRemote + "/transport"
)

// RemoteWrites are go-containerregistry's calls that write to a registry.
var RemoteWrites = []string{"Write", "WriteIndex", "WriteLayer", "MultiWrite", "Put", "Tag", "Delete"}

// Registry is the package that alone speaks HTTP and writes to registries,
// with the packages below it.
const Registry = "registry"

// The rules' names.
const (
	RuleTables      = "the tables match the module"
	RuleTable       = "imports only what its row allows"
	RuleDiagram     = "the diagram draws every import downwards or as an arrow"
	RuleHarness     = "no product package links a harness or tool"
	RuleBan         = "links nothing its row bans"
	RuleHTTP        = "only registry speaks HTTP"
	RuleRemoteOp    = "only registry builds remote options, pullers and pushers"
	RuleRemoteWrite = "only registry calls remote writes"
)

// Violation is one package breaking one rule.
type Violation struct {
	// Rule is the rule's name.
	Rule string
	// Package is the package that breaks it, relative to the module.
	Package string
	// Text says how, with the chain of imports where there is one.
	Text string
}

// String returns the violation as "rule: text".
func (v Violation) String() string { return v.Rule + ": " + v.Text }

// Check returns every violation of the architecture a in g, in the order
// of the rules and then of the packages.
func Check(a Architecture, g *Graph) []Violation {
	var out []Violation
	for _, rule := range []func(Architecture, *Graph) []Violation{checkTables, checkRows, checkDiagram, checkHarness, checkBans, checkHTTP, checkRemote} {
		out = append(out, rule(a, g)...)
	}
	return out
}

// eachPackage calls check on every package of the module in g, with its
// path relative to the module, and returns the violations it finds, in the
// order of the packages.
func eachPackage(g *Graph, check func(p *Package, rel string) []Violation) []Violation {
	var out []Violation
	for _, p := range g.Own() {
		rel, _ := g.Rel(p.ImportPath)
		out = append(out, check(p, rel)...)
	}
	return out
}

// checkTables checks the tables against the module: every package is a
// product package with a row or lies in a harness folder, no product row lies in a harness folder and every tool row
// does, and the package table is closed: a row that allows a package
// allows what that package may import, and no harness.
func checkTables(a Architecture, g *Graph) []Violation {
	out := eachPackage(g, func(_ *Package, rel string) []Violation {
		if _, product := a.Products[rel]; product || a.IsHarness(rel) {
			return nil
		}
		return []Violation{{RuleTables, rel, fmt.Sprintf("product package %s has no row in the package table", rel)}}
	})
	add := func(pkg, format string, args ...any) {
		out = append(out, Violation{RuleTables, pkg, fmt.Sprintf(format, args...)})
	}
	for _, kind := range []struct {
		name    string
		rows    map[string]Row
		harness bool
	}{{"package", a.Products, false}, {"tool", a.Tools, true}} {
		for _, p := range slices.Sorted(maps.Keys(kind.rows)) {
			switch {
			case kind.harness && !a.IsHarness(p):
				add(p, "the tool table has a row for %s, which lies in no harness folder", p)
			case !kind.harness && a.IsHarness(p):
				add(p, "the package table has a row for %s, which lies in a harness folder", p)
			}
			for _, dep := range kind.rows[p].MayImport {
				out = append(out, checkAllowed(a, p, dep, kind.harness)...)
			}
		}
	}
	return out
}

func checkAllowed(a Architecture, p, dep string, tool bool) []Violation {
	var out []Violation
	add := func(format string, args ...any) {
		out = append(out, Violation{RuleTables, p, fmt.Sprintf(format, args...)})
	}
	depRow, isRow := a.Row(dep)
	switch {
	case dep == p:
		add("%s's row allows %s itself", p, dep)
	case a.IsHarness(dep) && !tool:
		add("%s's row allows %s, which lies in a harness folder", p, dep)
	case !isRow && !a.IsHarness(dep):
		add("%s's row allows %s, which has no row (not a package of the module)", p, dep)
	}
	for _, d := range depRow.MayImport {
		if d != p && !slices.Contains(a.mayImport(p), d) {
			add("%s's row allows %s but not %s, which %s may import", p, dep, d, dep)
		}
	}
	return out
}

func (a Architecture) mayImport(p string) []string {
	r, _ := a.Row(p)
	return r.MayImport
}

// checkRows checks that every package with a row links, of the module's
// packages, only those its row allows. A product package's harnesses, and
// what it links through them, are left to checkHarness; a tool's are its
// row's.
func checkRows(a Architecture, g *Graph) []Violation {
	return eachPackage(g, func(p *Package, rel string) []Violation {
		row, ok := a.Row(rel)
		if !ok {
			return nil
		}
		_, tool := a.Tools[rel]
		order, chains := g.Reach(p.ImportPath, func(ip string) bool {
			dep, own := g.Rel(ip)
			return own && (tool || !a.IsHarness(dep))
		})
		var out []Violation
		for _, ip := range order {
			dep, own := g.Rel(ip)
			if !own || slices.Contains(row.MayImport, dep) || (!tool && a.IsHarness(dep)) {
				continue
			}
			out = append(out, Violation{RuleTable, rel, fmt.Sprintf("%s links %s, which its row does not allow: %s", rel, dep, g.Chain(chains[ip]))})
		}
		return out
	})
}

// checkDiagram checks that every import of a product package by another
// runs down the diagram, or along an arrow on one line.
func checkDiagram(a Architecture, g *Graph) []Violation {
	return eachPackage(g, func(p *Package, rel string) []Violation {
		from, ok := a.Diagram.Layer[rel]
		if !ok {
			return nil
		}
		var out []Violation
		for _, ip := range p.Imports {
			dep, _ := g.Rel(ip)
			to, ok := a.Diagram.Layer[dep]
			switch {
			case !ok || to > from || slices.Contains(a.Diagram.Arrows[rel], dep):
			case to == from:
				out = append(out, Violation{RuleDiagram, rel, fmt.Sprintf("%s imports %s, which the diagram draws beside it without an arrow", rel, dep)})
			default:
				out = append(out, Violation{RuleDiagram, rel, fmt.Sprintf("%s imports %s, which the diagram draws above it", rel, dep)})
			}
		}
		return out
	})
}

// checkHarness checks that no product package links a package in a
// harness folder: no import runs back up from the product to what tests,
// measures or releases it.
func checkHarness(a Architecture, g *Graph) []Violation {
	return eachPackage(g, func(p *Package, rel string) []Violation {
		if a.IsHarness(rel) {
			return nil
		}
		order, chains := g.Reach(p.ImportPath, func(ip string) bool { _, own := g.Rel(ip); return own })
		var out []Violation
		for _, ip := range order {
			if dep, own := g.Rel(ip); own && a.IsHarness(dep) {
				out = append(out, Violation{RuleHarness, rel, fmt.Sprintf("%s links %s: %s", rel, dep, g.Chain(chains[ip]))})
			}
		}
		return out
	})
}

// checkBans checks that no package with a row links, directly or through
// any other package, what its row's "must not link" bans: for each ban
// the nearest package it matches, with its chain.
func checkBans(a Architecture, g *Graph) []Violation {
	return eachPackage(g, func(p *Package, rel string) []Violation {
		row, ok := a.Row(rel)
		if !ok || len(row.MustNotLink) == 0 {
			return nil
		}
		order, chains := g.Reach(p.ImportPath, nil)
		var out []Violation
		for _, ban := range row.MustNotLink {
			i := slices.IndexFunc(order, ban.Matches)
			if i < 0 {
				continue
			}
			as := ban.Pattern
			if ban.As != "" {
				as = ban.As + ": " + ban.Pattern
			}
			out = append(out, Violation{RuleBan, rel, fmt.Sprintf("%s links %s (%s): %s", rel, order[i], as, g.Chain(chains[order[i]]))})
		}
		return out
	})
}

// outsideRegistry calls check on every package of the module in g but
// registry, the packages below it and the harnesses: the packages that may
// speak HTTP and write to registries.
func outsideRegistry(a Architecture, g *Graph, check func(p *Package, rel string) []Violation) []Violation {
	return eachPackage(g, func(p *Package, rel string) []Violation {
		if rel == Registry || strings.HasPrefix(rel, Registry+"/") || a.IsHarness(rel) {
			return nil
		}
		return check(p, rel)
	})
}

// checkHTTP checks that only registry (and the harnesses) imports net/http
// or go-containerregistry's transport itself.
func checkHTTP(a Architecture, g *Graph) []Violation {
	return outsideRegistry(a, g, func(p *Package, rel string) []Violation {
		var out []Violation
		for _, ip := range p.Imports {
			if ip == "net/http" || ip == GGCRTransport {
				out = append(out, Violation{RuleHTTP, rel, fmt.Sprintf("%s imports %s", rel, ip)})
			}
		}
		return out
	})
}

// checkRemote checks that only registry (and the harnesses) builds
// go-containerregistry remote options, pullers and pushers, and calls
// its writes.
func checkRemote(a Architecture, g *Graph) []Violation {
	return outsideRegistry(a, g, func(p *Package, rel string) []Violation {
		var out []Violation
		for _, r := range p.Refs {
			name, ok := strings.CutPrefix(r.Name, GGCRRemote+".")
			switch {
			case !ok:
			case strings.HasPrefix(name, "With") || name == "NewPuller" || name == "NewPusher":
				out = append(out, Violation{RuleRemoteOp, rel, fmt.Sprintf("%s uses %s (%s)", rel, r.Name, r.Pos)})
			case slices.Contains(RemoteWrites, name):
				out = append(out, Violation{RuleRemoteWrite, rel, fmt.Sprintf("%s calls %s (%s)", rel, r.Name, r.Pos)})
			}
		}
		return out
	})
}

// CheckAll checks a against the graphs of one module loaded for several
// build configurations, the default first: that every row names a package
// of some build, and Check on each graph. It returns each violation
// once, as "rule: text", prefixed with the configuration of the first
// graph that has it ("-tags nokubernetes: ...") unless that is the
// default.
func CheckAll(a Architecture, graphs ...*Graph) []string {
	var out []string
	for _, rows := range []map[string]Row{a.Products, a.Tools} {
		for _, p := range slices.Sorted(maps.Keys(rows)) {
			if !slices.ContainsFunc(graphs, func(g *Graph) bool { return g.Packages[g.Path(p)] != nil }) {
				out = append(out, Violation{RuleTables, p, fmt.Sprintf("%s has a row, and is not a package of the module", p)}.String())
			}
		}
	}
	seen := map[string]bool{}
	for _, g := range graphs {
		for _, v := range Check(a, g) {
			s := v.String()
			if seen[s] {
				continue
			}
			seen[s] = true
			if b := g.Build.String(); b != "" {
				s = b + ": " + s
			}
			out = append(out, s)
		}
	}
	return out
}
