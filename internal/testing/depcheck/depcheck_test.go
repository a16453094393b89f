package depcheck

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// builds are the configurations imgctl is built in, the default first:
// the host's, without the Kubernetes driver, and the Windows binary a
// release ships.
var builds = []Build{{}, {Tags: []string{"nokubernetes"}}, {GOOS: "windows"}}

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

// architecture reads the tables of the page at path.
func architecture(t *testing.T, path string) Architecture {
	t.Helper()
	md, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	a, err := ParseArchitecture(string(md))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return a
}

var imgctl struct {
	once   sync.Once
	graphs []*Graph
	err    error
}

// graphs loads imgctl's import graph once per tag set, once per test
// binary: go list takes seconds.
func graphs(t *testing.T) []*Graph {
	t.Helper()
	imgctl.once.Do(func() {
		for _, b := range builds {
			g, err := Load(root(t), b)
			if err != nil {
				imgctl.err = err
				return
			}
			imgctl.graphs = append(imgctl.graphs, g)
		}
	})
	if imgctl.err != nil {
		t.Fatal(imgctl.err)
	}
	for _, want := range []string{"registry", "verify", "platform", "snapshot", "index", "cmd/imgctl/cli"} {
		if g := imgctl.graphs[0]; g.Packages[g.Path(want)] == nil {
			t.Fatalf("package %s not found: the loader is broken", want)
		}
	}
	return imgctl.graphs
}

// TestArchitecture checks imgctl against docs/architecture.md's tables,
// with each set of build tags.
func TestArchitecture(t *testing.T) {
	a := architecture(t, filepath.Join(root(t), "docs", "architecture.md"))
	for _, v := range CheckAll(a, graphs(t)...) {
		t.Error(v)
	}
	for _, h := range a.Harnesses {
		if fi, err := os.Stat(filepath.Join(root(t), filepath.FromSlash(h))); err != nil || !fi.IsDir() {
			t.Errorf("docs/architecture.md lists the harness folder %s, which is not a directory of the module", h)
		}
	}
}

// TestSyntheticModule checks the checker on a module of its own
// (testdata/mod) with one violation of each kind planted, one in a file
// only -tags nokubernetes builds and one in a file only the Windows build
// has, and packages that may do what
// the others must not (registry, a harness).
func TestSyntheticModule(t *testing.T) {
	dir := filepath.Join("testdata", "mod")
	a := architecture(t, filepath.Join(dir, "architecture.md"))
	var gs []*Graph
	for _, b := range builds {
		g, err := Load(dir, b)
		if err != nil {
			t.Fatal(err)
		}
		gs = append(gs, g)
	}
	got := CheckAll(a, gs...)
	want := []string{
		RuleTables + ": gone has a row, and is not a package of the module",
		RuleTables + ": product package unlisted has no row in the package table",
		RuleTable + ": internal/tools/release links cli, which its row does not allow: internal/tools/release -> cli",
		RuleTable + ": rebase links cli, which its row does not allow: rebase -> cli",
		RuleDiagram + ": rebase imports cli, which the diagram draws above it",
		RuleDiagram + ": sign imports registry, which the diagram draws beside it without an arrow",
		RuleHarness + ": kube links internal/testing/regtest: kube -> internal/testing/regtest",
		RuleBan + ": index links net/http (network: net/http): index -> registry -> net/http",
		RuleBan + ": platform links net/http (network: net/http): platform -> net/http",
		RuleBan + ": verify links github.com/google/go-containerregistry/pkg/v1/remote (registry client: github.com/google/go-containerregistry/pkg/v1/remote/...): verify -> github.com/google/go-containerregistry/pkg/v1/remote",
		RuleHTTP + ": platform imports net/http",
		RuleRemoteWrite + ": sign calls github.com/google/go-containerregistry/pkg/v1/remote.Write (sign/sign.go:12)",
		"-tags nokubernetes: " + RuleBan + ": snapshot links net/http (network: net/http): snapshot -> example.com/x -> net/http",
		"GOOS=windows: " + RuleTable + ": index links verify, which its row does not allow: index -> verify",
		"GOOS=windows: " + RuleTable + ": rebase links verify, which its row does not allow: rebase -> index -> verify",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
}

// clone copies g deeply enough to add imports and references.
func clone(g *Graph) *Graph {
	c := *g
	c.Packages = map[string]*Package{}
	for k, p := range g.Packages {
		q := *p
		q.Imports, q.Refs = slices.Clone(p.Imports), slices.Clone(p.Refs)
		c.Packages[k] = &q
	}
	return &c
}

// TestRulesCatchViolations checks the rules as docs/architecture.md
// states them on imgctl's own graph: with a forbidden import or call added
// to one package, the matching rule fires for the package that then
// breaks it (which may be another that imports the first) and names what
// it links.
func TestRulesCatchViolations(t *testing.T) {
	a := architecture(t, filepath.Join(root(t), "docs", "architecture.md"))
	base := graphs(t)[0]
	m := base.Module + "/"
	for _, tc := range []struct {
		pkg, add, rule string
		call           bool
		violator       string // the package the rule names; "" is pkg
		names          string // what the violation must name; "" is add
	}{
		{"platform", m + "registry", RuleTable, false, "", "platform -> registry"},
		{"verify", m + "index", RuleTable, false, "", ""},
		{"internal/tools/release", m + "cmd/imgctl/cli", RuleTable, false, "", ""},
		{"internal/tools/release", m + "internal/testing/regtest", RuleTable, false, "", ""},
		{"index", m + "cmd/imgctl/cli", RuleTable, false, "", ""},
		// Transitive: kube may import verify, and verify now imports
		// registry, which kube's row does not allow.
		{"verify", m + "registry", RuleTable, false, "kube", "kube -> verify -> registry"},
		{"build/variant", m + "index", RuleTable, false, "build/nodes", "build/nodes -> build/variant -> index"},
		{"snapshot", m + "index", RuleDiagram, false, "", "snapshot imports index, which the diagram draws above it"},
		{"verify", m + "lint", RuleDiagram, false, "", "verify imports lint, which the diagram draws beside it without an arrow"},
		{"cmd/imgctl/cli", m + "internal/testing/signtest", RuleHarness, false, "", ""},
		{"index", m + "internal/testing/regtest", RuleHarness, false, "cmd/imgctl", "cmd/imgctl -> cmd/imgctl/cli -> index -> internal/testing/regtest"},
		{"lint", m + "internal/tools/bench", RuleHarness, false, "build/buildx", ""},
		{"platform", "net/http", RuleBan, false, "", "platform -> net/http"},
		// A third-party package between: snapshot -> ggcr's remote -> net/http.
		{"snapshot", GGCRRemote, RuleBan, false, "", "snapshot -> " + GGCRRemote + " -> net/http"},
		{"verify", GGCRRemote, RuleBan, false, "", "verify -> " + GGCRRemote},
		{"findings", "github.com/sigstore/sigstore-go/pkg/verify", RuleBan, false, "", ""},
		{"registry", "github.com/moby/buildkit/client", RuleBan, false, "", ""},
		// Transitive through the module: kube links BuildKit through verify.
		{"verify", "github.com/moby/buildkit/client", RuleBan, false, "kube", "kube -> verify -> github.com/moby/buildkit/client"},
		{"index", "net/http", RuleHTTP, false, "", ""},
		{"sign", GGCRTransport, RuleHTTP, false, "", ""},
		{"policy", GGCRRemote + ".WithAuthFromKeychain", RuleRemoteOp, true, "", ""},
		{"build", GGCRRemote + ".NewPusher", RuleRemoteOp, true, "", ""},
		{"policy", GGCRRemote + ".Write", RuleRemoteWrite, true, "", ""},
		{"rebase", GGCRRemote + ".Tag", RuleRemoteWrite, true, "", ""},
	} {
		g := clone(base)
		p := g.Packages[g.Path(tc.pkg)]
		if p == nil {
			t.Fatalf("no package %s", tc.pkg)
		}
		if tc.call {
			p.Refs = append(p.Refs, Ref{Name: tc.add, Pos: "x.go:1"})
		} else {
			p.Imports = append(p.Imports, tc.add)
		}
		violator, names := cmp(tc.violator, tc.pkg), cmp(tc.names, strings.TrimPrefix(tc.add, m))
		var caught bool
		for _, v := range Check(a, g) {
			caught = caught || (v.Rule == tc.rule && v.Package == violator && strings.Contains(v.Text, names))
		}
		if !caught {
			t.Errorf("%s using %s: rule %q did not fire for %s naming %q", tc.pkg, tc.add, tc.rule, violator, names)
		}
	}
}

func cmp(s, or string) string {
	if s == "" {
		return or
	}
	return s
}

// TestReach checks the walk on a small graph with a cycle: every package
// reached once, by its shortest chain, nearest first, the start left out,
// and a package not followed when follow says no.
func TestReach(t *testing.T) {
	g := &Graph{Module: "m", Packages: map[string]*Package{
		"m/a": {ImportPath: "m/a", Imports: []string{"m/c", "m/b", "fmt"}},
		"m/b": {ImportPath: "m/b", Imports: []string{"m/d"}},
		"m/c": {ImportPath: "m/c", Imports: []string{"m/d", "m/a"}},
		"m/d": {ImportPath: "m/d", Imports: []string{"x/e", "m/b"}},
		"x/e": {ImportPath: "x/e", Imports: []string{"net/http"}},
	}}
	order, chains := g.Reach("m/a", nil)
	if want := []string{"fmt", "m/b", "m/c", "m/d", "x/e", "net/http"}; !slices.Equal(order, want) {
		t.Errorf("order %q, want %q", order, want)
	}
	if got := g.Chain(chains["net/http"]); got != "a -> b -> d -> x/e -> net/http" {
		t.Errorf("chain to net/http: %s", got)
	}
	_, chains = g.Reach("m/a", func(ip string) bool { _, own := g.Rel(ip); return own })
	if _, ok := chains["net/http"]; ok || chains["x/e"] == nil {
		t.Errorf("walked on from a package follow refused: %v", slices.Sorted(maps.Keys(chains)))
	}
}

// TestParseArchitecture checks the table reader: aliases in both columns,
// "nothing", the tool and harness tables, the diagram's layers and
// arrows, and refusals of what it cannot read.
func TestParseArchitecture(t *testing.T) {
	md := "text | not a table\n\n```\ntop      index ──► verify, platform\n   a note: platform\nbottom   snapshot  `nothing`\n```\n\n" +
		"| alias | stands for |\n| --- | --- |\n| value packages | `platform`, `snapshot` |\n| network | `net/http`, `google.golang.org/grpc/...` |\n\n" +
		"| package | owns | may import (of imgctl) | must not link |\n| --- | --- | --- | --- |\n" +
		"| `platform` | values | nothing | network |\n" +
		"| `verify` | rules | value packages | `github.com/x/...`, network |\n" +
		"| `index` | merge | `registry`, value packages | nothing |\n\n" +
		"| tool | what | may import |\n| --- | --- | --- |\n| `internal/tools/release` | release | `index` |\n\n" +
		"| harness | what |\n| --- | --- |\n| `internal/testing` | harnesses |\n| `examples` | examples |\n"
	a, err := ParseArchitecture(md)
	if err != nil {
		t.Fatal(err)
	}
	network := []Ban{{"net/http", "network"}, {"google.golang.org/grpc/...", "network"}}
	want := map[string]Row{
		"platform": {MustNotLink: network},
		"verify":   {MayImport: []string{"platform", "snapshot"}, MustNotLink: append([]Ban{{"github.com/x/...", ""}}, network...)},
		"index":    {MayImport: []string{"platform", "registry", "snapshot"}, MustNotLink: []Ban{}},
	}
	eq := func(a, b Row) bool {
		return slices.Equal(a.MayImport, b.MayImport) && slices.Equal(a.MustNotLink, b.MustNotLink)
	}
	if !maps.EqualFunc(a.Products, want, eq) || !slices.Equal(a.Tools["internal/tools/release"].MayImport, []string{"index"}) ||
		!slices.Equal(a.Harnesses, []string{"examples", "internal/testing"}) {
		t.Errorf("got %+v, tools %+v and harnesses %v", a.Products, a.Tools, a.Harnesses)
	}
	if d := a.Diagram; !maps.Equal(d.Layer, map[string]int{"index": 0, "verify": 0, "platform": 0}) ||
		!slices.Equal(d.Arrows["index"], []string{"verify", "platform"}) || len(d.Arrows) != 1 {
		t.Errorf("diagram: %+v", d)
	}
	if !a.IsHarness("internal/testing/regtest") || a.IsHarness("internal/testingx") || a.IsHarness("index") {
		t.Error("IsHarness: wrong")
	}
	ban := Ban{Pattern: "google.golang.org/grpc/..."}
	if !ban.Matches("google.golang.org/grpc") || !ban.Matches("google.golang.org/grpc/codes") || ban.Matches("google.golang.org/grpcx") {
		t.Error("Ban.Matches: wrong")
	}
	for _, bad := range []string{
		strings.Replace(md, "value packages | nothing |", "value packages only | nothing |", 1),
		strings.Replace(md, "| `index` | merge | `registry`, value packages |", "| `index` | merge | registry |", 1),
		strings.Replace(md, "| `index` |", "| index |", 1),
		strings.Replace(md, "| `index` |", "| `verify` |", 1),
		strings.Replace(md, "| `platform` | values | nothing | network |", "| `platform` | values | nothing |", 1),
		strings.Replace(md, "| `platform` | values |", "| `platform` | a | b |", 1),
		strings.Replace(md, "| network |", "| `network` |", 1),
		strings.Replace(md, "| `net/http`,", "| net/http,", 1),
		strings.Replace(md, "| must not link |", "| bans |", 1),
		strings.Replace(md, "| harness |", "| harnesses |", 1),
		strings.Replace(md, "| tool |", "| tools |", 1),
		strings.Replace(md, "`internal/tools/release` | release", "`index` | release", 1),
		strings.Replace(md, "```\n", "", 2),
		strings.Replace(md, ", platform\n", "\n", 1),
		strings.Replace(md, "snapshot  `nothing`", "snapshot  verify", 1),
	} {
		if _, err := ParseArchitecture(bad); err == nil {
			t.Errorf("no error for\n%s", bad)
		}
	}
}
