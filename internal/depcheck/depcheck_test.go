package depcheck

import (
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

// valuePackages import nothing of imgctl: everything else may build on
// them.
var valuePackages = []string{"platform", "snapshot"}

// outputFormats write what CI systems read (GitHub's workflow commands
// and step summary, the SARIF schema check): the CLI turns findings into
// their terms, so they import nothing of imgctl.
var outputFormats = []string{"internal/ghactions", "internal/sariftest"}

// harnesses are test harnesses, benchmarks and examples: they stand up
// registries and count requests, so they may speak HTTP.
var harnesses = []string{"internal/regtest", "internal/disttest", "internal/buildtest", "internal/depcheck", "bench", "examples"}

// rules are imgctl's layers (docs/architecture.md).
func rules() []Rule {
	is := func(names ...string) func(string) bool {
		return func(p string) bool { return slices.Contains(names, p) }
	}
	httpAllowed := append([]string{"registry"}, harnesses...)
	return []Rule{
		{"value packages import nothing of imgctl", ImportsOnly(module, is(valuePackages...))},
		{"verify imports only value packages", ImportsOnly(module, is("verify"), valuePackages...)},
		{"lint imports only value packages", ImportsOnly(module, is("lint"), valuePackages...)},
		{"kube imports only value packages and verify", ImportsOnly(module, is("kube"), append(valuePackages, "verify")...)},
		{"build/buildx imports only build and value packages", ImportsOnly(module, is("build/buildx"), append(valuePackages, "build")...)},
		{"output formats import nothing of imgctl", ImportsOnly(module, is(outputFormats...))},
		{"only registry speaks HTTP", NoneOutside(httpAllowed, "net/http", ggcrTransport)},
		{"only registry builds remote options, pullers and pushers", NoneOutside(httpAllowed,
			ggcrRemote+".With*", ggcrRemote+".NewPuller", ggcrRemote+".NewPusher")},
	}
}

func root(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(r, "go.mod")); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestLayers checks imgctl's own packages against the rules.
func TestLayers(t *testing.T) {
	pkgs, err := Load(root(t), module)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"registry", "verify", "platform", "snapshot", "index", "cmd/imgctl/cli"} {
		if pkgs[want] == nil {
			t.Fatalf("package %s not found: the loader is broken", want)
		}
	}
	for _, r := range rules() {
		for _, v := range r.Check(pkgs) {
			t.Errorf("%s: %s", r.Name, v)
		}
	}
}

// TestRulesCatchViolations checks the checker: a copy of the tree with a
// forbidden import or call added to each layer fails the matching rule.
func TestRulesCatchViolations(t *testing.T) {
	base, err := Load(root(t), module)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		pkg, add, rule string
		call           bool
	}{
		{"platform", module + "/registry", "value packages import nothing of imgctl", false},
		{"snapshot", module + "/platform", "value packages import nothing of imgctl", false},
		{"verify", module + "/index", "verify imports only value packages", false},
		{"kube", module + "/registry", "kube imports only value packages and verify", false},
		{"internal/ghactions", module + "/verify", "output formats import nothing of imgctl", false},
		{"index", "net/http", "only registry speaks HTTP", false},
		{"sign", ggcrTransport, "only registry speaks HTTP", false},
		{"policy", ggcrRemote + ".WithAuthFromKeychain", "only registry builds remote options, pullers and pushers", true},
		{"build", ggcrRemote + ".NewPusher", "only registry builds remote options, pullers and pushers", true},
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
		caught := false
		for _, r := range rules() {
			for _, v := range r.Check(pkgs) {
				if r.Name == tc.rule && strings.HasPrefix(v, tc.pkg+" ") {
					caught = true
				}
			}
		}
		if !caught {
			t.Errorf("%s using %s: rule %q did not fire", tc.pkg, tc.add, tc.rule)
		}
	}
}

// TestLoadSeesCalls checks that the loader records qualified references
// from source, so that a forbidden call in a real file is seen.
func TestLoadSeesCalls(t *testing.T) {
	dir := t.TempDir()
	src := "package bad\n\nimport (\n\tr \"" + ggcrRemote + "\"\n\t\"net/http\"\n)\n\nvar _ = r.WithTransport(http.DefaultTransport)\n"
	if err := os.MkdirAll(filepath.Join(dir, "bad"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bad", "bad.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	pkgs, err := Load(dir, module)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rules() {
		for _, v := range r.Check(pkgs) {
			got = append(got, r.Name+": "+v)
		}
	}
	want := []string{
		"only registry speaks HTTP: bad uses net/http",
		"only registry builds remote options, pullers and pushers: bad uses " + ggcrRemote + ".WithTransport",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations of a file with a forbidden import and call:\n got %q\nwant %q", got, want)
	}
}
