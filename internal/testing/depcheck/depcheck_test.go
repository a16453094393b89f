package depcheck

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/imgctl/imgctl"

const (
	ggcrRemote    = "github.com/google/go-containerregistry/pkg/v1/remote"
	ggcrTransport = "github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// aliases are the names docs/architecture.md's package table may use for
// several packages: the value packages import nothing of imgctl, and
// everything else may build on them.
var aliases = map[string][]string{"value packages": {"platform", "snapshot"}}

// Rule names, which TestRulesCatchViolations refers to.
const (
	ruleTable    = "imports only what its row of docs/architecture.md allows"
	ruleHarness  = "no product package links a test harness"
	ruleHTTP     = "only registry speaks HTTP"
	ruleRemoteOp = "only registry builds remote options, pullers and pushers"
)

// rules are imgctl's layers, from docs/architecture.md's tables: every
// package with a row imports, directly or through others, only what its
// row allows (test harnesses aside: the harness rule judges those); no
// product package links a harness; only registry and the harnesses speak
// HTTP.
func rules(a Architecture) []Rule {
	hasRow := func(p string) bool { _, ok := a.Allowed[p]; return ok }
	isProduct := func(p string) bool { return !a.IsHarness(p) }
	httpAllowed := append([]string{"registry"}, a.Harnesses...)
	return []Rule{
		{ruleTable, LinksOnly(module, hasRow, func(p, dep string) bool {
			return a.IsHarness(dep) || slices.Contains(a.Allowed[p], dep)
		})},
		{ruleHarness, LinksOnly(module, isProduct, func(_, dep string) bool { return !a.IsHarness(dep) })},
		{ruleHTTP, NoneOutside(httpAllowed, "net/http", ggcrTransport)},
		{ruleRemoteOp, NoneOutside(httpAllowed, ggcrRemote+".With*", ggcrRemote+".NewPuller", ggcrRemote+".NewPusher")},
	}
}

func root(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(r, "go.mod")); err != nil {
		t.Fatal(err)
	}
	return r
}

// architecture reads docs/architecture.md's tables.
func architecture(t *testing.T) Architecture {
	t.Helper()
	md, err := os.ReadFile(filepath.Join(root(t), "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := ParseArchitecture(string(md), aliases)
	if err != nil {
		t.Fatalf("docs/architecture.md: %v", err)
	}
	return a
}

func load(t *testing.T) map[string]*Package {
	t.Helper()
	pkgs, err := Load(root(t), module)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"registry", "verify", "platform", "snapshot", "index", "cmd/imgctl/cli"} {
		if pkgs[want] == nil {
			t.Fatalf("package %s not found: the loader is broken", want)
		}
	}
	return pkgs
}

// TestArchitectureTable checks docs/architecture.md's tables against the
// module: every package is a product package with a row or a harness,
// every package and harness they name exists, and the table is closed: a
// row that allows a package allows what that package may import.
func TestArchitectureTable(t *testing.T) {
	a, pkgs := architecture(t), load(t)
	for _, p := range sorted(pkgs) {
		_, row := a.Allowed[p.Path]
		switch {
		case a.IsHarness(p.Path) && row:
			t.Errorf("%s is both a harness and a product package with a row", p.Path)
		case !a.IsHarness(p.Path) && !row:
			t.Errorf("product package %s has no row in docs/architecture.md's package table", p.Path)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(a.Allowed)) {
		if pkgs[p] == nil {
			t.Errorf("docs/architecture.md has a row for %s, which is not a package of the module", p)
		}
		for _, dep := range a.Allowed[p] {
			depAllowed, row := a.Allowed[dep]
			switch {
			case dep == p:
				t.Errorf("%s's row allows %s itself", p, dep)
			case a.IsHarness(dep):
				t.Errorf("%s's row allows %s, a test harness", p, dep)
			case !row:
				t.Errorf("%s's row allows %s, which has no row (not a product package of the module)", p, dep)
			}
			for _, d := range depAllowed {
				if d != p && !slices.Contains(a.Allowed[p], d) {
					t.Errorf("%s's row allows %s but not %s, which %s may import", p, dep, d, dep)
				}
			}
		}
	}
	for _, h := range a.Harnesses {
		if fi, err := os.Stat(filepath.Join(root(t), filepath.FromSlash(h))); err != nil || !fi.IsDir() {
			t.Errorf("docs/architecture.md lists the harness %s, which is not a directory of the module", h)
		}
	}
}

// TestLayers checks imgctl's own packages against the rules.
func TestLayers(t *testing.T) {
	a, pkgs := architecture(t), load(t)
	for _, r := range rules(a) {
		for _, v := range r.Check(pkgs) {
			t.Errorf("%s: %s", r.Name, v)
		}
	}
}

// TestRulesCatchViolations checks the checker: a copy of the tree with a
// forbidden import or call added to one package fails the matching rule
// for the package that then breaks it, which may be another package that
// imports the first (a transitive violation).
func TestRulesCatchViolations(t *testing.T) {
	a, base := architecture(t), load(t)
	for _, tc := range []struct {
		pkg, add, rule string
		call           bool
		// violator is the package the rule names; "" is pkg.
		violator string
	}{
		{"platform", module + "/registry", ruleTable, false, ""},
		{"snapshot", module + "/platform", ruleTable, false, ""},
		{"verify", module + "/index", ruleTable, false, ""},
		{"kube", module + "/registry", ruleTable, false, ""},
		{"internal/ghactions", module + "/verify", ruleTable, false, ""},
		{"internal/tools/release", module + "/cmd/imgctl/cli", ruleTable, false, ""},
		{"index", module + "/cmd/imgctl/cli", ruleTable, false, ""},
		// Transitive: kube may import verify, and verify now imports
		// registry, which kube's row does not allow.
		{"verify", module + "/registry", ruleTable, false, "kube"},
		// Transitive: build/buildx links sign through build/nodes.
		{"build/nodes", module + "/sign", ruleTable, false, "build/buildx"},
		// Transitive: build/nodes links index through build/variant.
		{"build/variant", module + "/index", ruleTable, false, "build/nodes"},
		{"cmd/imgctl/cli", module + "/internal/testing/signtest", ruleHarness, false, ""},
		// Transitive: the CLI, and the binary, link the harness through index.
		{"index", module + "/internal/testing/regtest", ruleHarness, false, "cmd/imgctl"},
		{"lint", module + "/internal/testing/buildtest/scanner", ruleHarness, false, "build/buildx"},
		{"index", "net/http", ruleHTTP, false, ""},
		{"sign", ggcrTransport, ruleHTTP, false, ""},
		{"policy", ggcrRemote + ".WithAuthFromKeychain", ruleRemoteOp, true, ""},
		{"build", ggcrRemote + ".NewPusher", ruleRemoteOp, true, ""},
	} {
		pkgs := map[string]*Package{}
		for k, p := range base {
			c := *p
			c.Imports, c.Calls = slices.Clone(p.Imports), slices.Clone(p.Calls)
			pkgs[k] = &c
		}
		p := pkgs[tc.pkg]
		if p == nil {
			p = &Package{Path: tc.pkg}
			pkgs[tc.pkg] = p
		}
		if tc.call {
			p.Calls = append(p.Calls, tc.add)
		} else {
			p.Imports = append(p.Imports, tc.add)
		}
		violator := tc.violator
		if violator == "" {
			violator = tc.pkg
		}
		added := strings.TrimPrefix(tc.add, module+"/")
		caught := false
		for _, r := range rules(a) {
			if r.Name != tc.rule {
				continue
			}
			for _, v := range r.Check(pkgs) {
				if strings.HasPrefix(v, violator+" ") && strings.Contains(v, added) {
					caught = true
				}
			}
		}
		if !caught {
			t.Errorf("%s using %s: rule %q did not fire for %s", tc.pkg, tc.add, tc.rule, violator)
		}
	}
}

// TestClosure checks the transitive imports on a small graph with a
// cycle: every package reached once, by its shortest chain, the start
// left out, a package outside the module not followed.
func TestClosure(t *testing.T) {
	pkgs := map[string]*Package{
		"a": {Path: "a", Imports: []string{module + "/b", module + "/c", "fmt"}},
		"b": {Path: "b", Imports: []string{module + "/d"}},
		"c": {Path: "c", Imports: []string{module + "/d", module + "/a"}},
		"d": {Path: "d", Imports: []string{module + "/e", module + "/b"}},
	}
	got := Closure(pkgs, module, "a")
	want := map[string][]string{"b": {"a", "b"}, "c": {"a", "c"}, "d": {"a", "b", "d"}, "e": {"a", "b", "d", "e"}}
	if !maps.EqualFunc(got, want, slices.Equal) {
		t.Errorf("Closure(a) = %v, want %v", got, want)
	}
	v := ImportsOnly(module, func(p string) bool { return p == "a" }, "b", "c", "d")(pkgs)
	if !slices.Equal(v, []string{"a imports e (a → b → d → e)"}) {
		t.Errorf("ImportsOnly: %q", v)
	}
}

// TestLoadSeesCalls checks that the loader records qualified references
// from source, so that a forbidden call in a real file is seen, and that
// it leaves test files out of the import graph.
func TestLoadSeesCalls(t *testing.T) {
	dir := t.TempDir()
	src := "package bad\n\nimport (\n\tr \"" + ggcrRemote + "\"\n\t\"net/http\"\n)\n\nvar _ = r.WithTransport(http.DefaultTransport)\n"
	test := "package bad\n\nimport _ \"" + module + "/internal/testing/regtest\"\n"
	if err := os.MkdirAll(filepath.Join(dir, "bad"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bad", "bad.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bad", "bad_test.go"), []byte(test), 0o644); err != nil {
		t.Fatal(err)
	}
	pkgs, err := Load(dir, module)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rules(architecture(t)) {
		for _, v := range r.Check(pkgs) {
			got = append(got, r.Name+": "+v)
		}
	}
	want := []string{
		ruleHTTP + ": bad uses net/http",
		ruleRemoteOp + ": bad uses " + ggcrRemote + ".WithTransport",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations of a file with a forbidden import and call:\n got %q\nwant %q", got, want)
	}
}

// TestParseArchitecture checks the table reader: aliases, "nothing", the
// harness table, and refusals of what it cannot read.
func TestParseArchitecture(t *testing.T) {
	md := "# x\n\n| package | owns | may import (of imgctl) |\n| --- | --- | --- |\n" +
		"| `platform` | a \\| b? no | nothing |\n"
	if _, err := ParseArchitecture(md, aliases); err == nil {
		t.Error("a | inside a cell: no error")
	}
	md = "text | not a table\n\n| package | owns | may import (of imgctl) |\n| --- | --- | --- |\n" +
		"| `platform` | values | nothing |\n" +
		"| `verify` | rules | value packages |\n" +
		"| `index` | merge | `registry`, value packages |\n\n" +
		"| harness | what |\n| --- | --- |\n| `internal/testing/regtest` | a registry |\n| `examples` | examples |\n"
	a, err := ParseArchitecture(md, aliases)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"platform": {}, "verify": {"platform", "snapshot"}, "index": {"platform", "registry", "snapshot"}}
	if !maps.EqualFunc(a.Allowed, want, slices.Equal) || !slices.Equal(a.Harnesses, []string{"examples", "internal/testing/regtest"}) {
		t.Errorf("got %v and harnesses %v", a.Allowed, a.Harnesses)
	}
	if !a.IsHarness("internal/testing/regtest/sub") || a.IsHarness("internal/testing/regtestx") || a.IsHarness("index") {
		t.Error("IsHarness: wrong")
	}
	for _, bad := range []string{
		strings.Replace(md, "value packages |\n", "value packages only |\n", 1),
		strings.Replace(md, "| `index` | merge | `registry`, value packages |\n", "| `index` | merge | registry |\n", 1),
		strings.Replace(md, "| `index` |", "| index |", 1),
		strings.Replace(md, "| `index` |", "| `verify` |", 1),
		strings.Replace(md, "| harness |", "| harnesses |", 1),
	} {
		if _, err := ParseArchitecture(bad, aliases); err == nil {
			t.Errorf("no error for\n%s", bad)
		}
	}
}
