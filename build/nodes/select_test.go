package nodes

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// TestSelectNodes: the builders file and Nodes fill the nodes; with nodes
// the default address is no fallback, a Nodes value wins over the file,
// and the TLS settings only go to tcp:// addresses.
func TestSelectNodes(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "builders.yaml")
	src := "- platform: linux/amd64\n  address: tcp://file-amd64:1234\n  tls: {ca: ca.pem}\n- platform: windows\n  address: tcp://file-win:1234\n"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	tls := TLSOptions{CACert: "/flags/ca.pem"}
	fb, nodes, err := Select(ctx, SelectInput{TLS: tls, BuildersFile: file, Nodes: []string{"windows=tcp://flag-win:1234", "linux/arm64=unix:///run/arm.sock"}})
	if err != nil {
		t.Fatal(err)
	}
	if fb != (Builder{}) || len(nodes) != 3 {
		t.Fatalf("builder %+v, nodes %v", fb, nodes)
	}
	if n := nodes[0]; n.Builder.TLS.CACert != filepath.Join(filepath.Dir(file), "ca.pem") {
		t.Errorf("file node TLS %+v", n.Builder.TLS)
	}
	if n := nodes[1]; n.String() != "windows=tcp://flag-win:1234" || n.Builder.TLS != tls {
		t.Errorf("the Nodes value did not replace the file's windows node: %+v", n)
	}
	if n := nodes[2]; n.Builder.TLS != (TLSOptions{}) {
		t.Errorf("unix node got TLS: %+v", n.Builder.TLS)
	}
	// An explicit builder stays as the fallback, without the TLS settings when it is not tcp://.
	fb, _, err = Select(ctx, SelectInput{Builder: "unix:///run/bk.sock", TLS: tls, Nodes: []string{"windows=tcp://w:1"}})
	if err != nil || fb.Addr != "unix:///run/bk.sock" || fb.TLS != (TLSOptions{}) {
		t.Errorf("fallback %+v, err %v", fb, err)
	}
	for _, tc := range []struct {
		in    SelectInput
		input string
		want  error
	}{
		{SelectInput{Nodes: []string{"windows"}}, InputNodes, ErrInvalidNode},
		{SelectInput{Nodes: []string{"windows=unix:///w.sock", "linux=tcp://l:1"}, TLS: TLSOptions{Cert: "c.pem"}}, InputNodes, ErrInvalidBuilder},
		{SelectInput{BuildersFile: file + ".missing"}, InputBuildersFile, ErrInvalidNode},
		{SelectInput{Builder: "unix:///b.sock", TLS: tls}, "", ErrInvalidBuilder},
	} {
		_, _, err := Select(ctx, tc.in)
		var ie *InputError
		if !errors.Is(err, tc.want) || errors.As(err, &ie) != (tc.input != "") || (ie != nil && ie.Input != tc.input) {
			t.Errorf("%+v: err = %v (%T), want %v from input %q", tc.in, err, err, tc.want, tc.input)
		}
	}
	// Without nodes nothing changes.
	fb, nodes, err = Select(ctx, SelectInput{TLS: TLSOptions{}})
	if err != nil || fb.Source != SourceDefault || nodes != nil {
		t.Errorf("no nodes: %+v %v, err %v", fb, nodes, err)
	}
}

// fakeInstances is one builder instance, pool, with a Linux and a Windows
// node; current is the instance made current.
type fakeInstances struct {
	current string
	loads   []string
}

func (f *fakeInstances) Name(builder string, getenv func(string) string) (string, string) {
	if s := strings.TrimSpace(builder); s != "" {
		if strings.Contains(s, "://") {
			return "", ""
		}
		return s, SourceOption
	}
	if getenv == nil || getenv(EnvBuildkitHost) != "" {
		return "", ""
	}
	if s := getenv("BUILDX_BUILDER"); s != "" {
		return s, "$BUILDX_BUILDER"
	}
	return "", ""
}

func (f *fakeInstances) Current() (string, string, error) {
	if f.current == "broken" {
		return "", "", errors.New("unreadable store")
	}
	return f.current, "docker buildx use", nil
}

func (f *fakeInstances) Load(_ context.Context, name string) ([]Node, Builder, error) {
	f.loads = append(f.loads, name)
	if name != "pool" {
		return nil, Builder{}, errors.New(`no such buildx builder "` + name + `"`)
	}
	lin := Builder{Addr: InstanceScheme + "pool/lin", Source: "buildx builder pool"}
	win := Builder{Addr: InstanceScheme + "pool/win", Source: "buildx builder pool"}
	return []Node{
		{Platform: v1.Platform{OS: "linux", Architecture: "amd64"}, Builder: lin},
		{Platform: v1.Platform{OS: "linux", Architecture: "arm64"}, Builder: lin},
		{Platform: v1.Platform{OS: "windows", Architecture: "amd64"}, Builder: win},
	}, lin, nil
}

// TestSelectInstances: an instance named by Builder or the environment,
// else the current one, gives the nodes; an address or $BUILDKIT_HOST
// reads no instance; a builders file entry and a Nodes value replace an
// instance's node of their platform.
func TestSelectInstances(t *testing.T) {
	ctx := context.Background()
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	file := filepath.Join(t.TempDir(), "builders.yaml")
	if err := os.WriteFile(file, []byte("- {platform: linux/arm64, address: tcp://file-arm:1234}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	strs := func(ns []Node) string {
		var out []string
		for _, n := range ns {
			out = append(out, n.String())
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		name     string
		in       SelectInput
		current  string
		fallback string
		nodes    string
		loads    int
	}{
		{"flag", SelectInput{Builder: "pool", Getenv: env("BUILDX_BUILDER", "other")}, "", "buildx://pool/lin",
			"linux/amd64=buildx://pool/lin linux/arm64=buildx://pool/lin windows/amd64=buildx://pool/win", 1},
		{"file and Nodes replace the instance's nodes", SelectInput{Builder: "pool", BuildersFile: file, Nodes: []string{"windows/amd64=tcp://flag-win:1234"}}, "", "buildx://pool/lin",
			"linux/amd64=buildx://pool/lin linux/arm64=tcp://file-arm:1234 windows/amd64=tcp://flag-win:1234", 1},
		{"BUILDX_BUILDER", SelectInput{Getenv: env("BUILDX_BUILDER", "pool")}, "", "buildx://pool/lin",
			"linux/amd64=buildx://pool/lin linux/arm64=buildx://pool/lin windows/amd64=buildx://pool/win", 1},
		{"BUILDKIT_HOST wins over BUILDX_BUILDER and the current one", SelectInput{Getenv: env("BUILDX_BUILDER", "pool", EnvBuildkitHost, "unix:///env.sock")}, "pool", "unix:///env.sock", "", 0},
		{"an address", SelectInput{Builder: "tcp://flag:1234"}, "pool", "tcp://flag:1234", "", 0},
		{"the current one", SelectInput{Getenv: env()}, "pool", "buildx://pool/lin",
			"linux/amd64=buildx://pool/lin linux/arm64=buildx://pool/lin windows/amd64=buildx://pool/win", 1},
		{"none current", SelectInput{Getenv: env()}, "", DefaultBuilderAddress, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeInstances{current: tc.current}
			tc.in.Instances = f
			fb, nodes, err := Select(ctx, tc.in)
			if err != nil || fb.Addr != tc.fallback || strs(nodes) != tc.nodes || len(f.loads) != tc.loads {
				t.Errorf("fallback %+v, nodes %q, loads %v, err %v; want %s, %q", fb, strs(nodes), f.loads, err, tc.fallback, tc.nodes)
			}
		})
	}
	for _, tc := range []struct {
		name    string
		in      SelectInput
		current string
		want    string
	}{
		{"unknown instance", SelectInput{Builder: "nope"}, "", `the builder option: no such buildx builder "nope"`},
		{"unknown instance, named by the caller", SelectInput{Builder: "nope", Names: InputNames{Builder: "--builder"}}, "", `--builder: no such buildx builder "nope"`},
		{"TLS without nodes", SelectInput{Builder: "pool", TLS: TLSOptions{CACert: "ca.pem"}}, "", `buildx builder "pool" (from the builder option) keeps its TLS settings in its driver-opts`},
		{"unreadable current", SelectInput{}, "broken", "reading the current buildx builder: unreadable store"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Instances = &fakeInstances{current: tc.current}
			_, _, err := Select(ctx, tc.in)
			if !errors.Is(err, ErrInvalidSelection) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), ErrInvalidSelection.Error()) {
				t.Errorf("err = %v, want ErrInvalidSelection reading %q", err, tc.want)
			}
		})
	}
}

func TestParseNode(t *testing.T) {
	mustNode := func(t *testing.T, s string) Node {
		t.Helper()
		n, err := parseNode(s, TLSOptions{CACert: "ca.pem"})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for in, want := range map[string]string{
		"windows=tcp://win:1234":            "windows",
		"linux/amd64=unix:///run/bk.sock":   "linux/amd64",
		"linux/arm64/v8=tcp://arm:1234":     "linux/arm64",
		"ltsc2025=tcp://win25:1234":         "windows/amd64:10.0.26100",
		"windows/amd64=tcp://win:1234":      "windows/amd64",
		" Windows = tcp://win:1234":         "windows",
		"linux/arm/v7=docker-container://x": "linux/arm/v7",
	} {
		n, err := parseNode(in, TLSOptions{})
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if got := FormatNodePlatform(n.Platform); got != want || n.Builder.Source != SourceNodeOption {
			t.Errorf("%q: platform %q source %q, want %q", in, got, n.Builder.Source, want)
		}
	}
	for _, in := range []string{"windows", "windows=", "=tcp://x:1", "linux/amd64/v1/x=tcp://x:1", "Lin ux=tcp://x:1"} {
		if _, err := parseNode(in, TLSOptions{}); !errors.Is(err, ErrInvalidNode) {
			t.Errorf("%q: err = %v, want ErrInvalidNode", in, err)
		}
	}
	if n := mustNode(t, "linux/amd64=unix:///s"); n.Builder.TLS != (TLSOptions{}) {
		t.Error("a unix:// node took the TLS flags")
	}
	if n := mustNode(t, "windows=tcp://win:1234"); n.Builder.TLS.CACert != "ca.pem" {
		t.Error("a tcp:// node lacks the TLS flags")
	}
}

// TestSelectNames: what Select returns names its inputs as the caller's
// InputNames say, and keeps the package's own names without them.
func TestSelectNames(t *testing.T) {
	file := filepath.Join(t.TempDir(), "builders.yaml")
	if err := os.WriteFile(file, []byte("- platform: windows\n  address: tcp://file-win:1234\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := SelectInput{Builder: "unix:///b.sock", BuildersFile: file, Nodes: []string{"linux/arm64=tcp://arm:1234"}}
	for _, tc := range []struct {
		names InputNames
		want  string
	}{
		{InputNames{}, "unix:///b.sock (from the builder option) | linux/arm64=tcp://arm:1234 (from a node option) | windows=tcp://file-win:1234 (from the builders file " + file + ")"},
		{InputNames{Builder: "--builder", Node: "--node", BuildersFile: "--builders"}, "unix:///b.sock (from --builder) | linux/arm64=tcp://arm:1234 (from --node) | windows=tcp://file-win:1234 (from --builders " + file + ")"},
	} {
		in.Names = tc.names
		fb, nodes, err := Select(t.Context(), in)
		if err != nil {
			t.Fatal(err)
		}
		got := []string{fb.String()}
		for _, n := range nodes {
			got = append(got, n.String()+" (from "+n.Builder.Source+")")
		}
		slices.Sort(got[1:])
		if g := strings.Join(got, " | "); g != tc.want {
			t.Errorf("names %+v:\n got %s\nwant %s", tc.names, g, tc.want)
		}
	}
}
