package cli

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/imgctl/imgctl/build"
)

// TestNodeFlags: --node and --builders fill build.Options.Nodes; with
// nodes the default socket is no fallback, --node wins over the file, and
// the --tls* flags only go to tcp:// addresses.
func TestNodeFlags(t *testing.T) {
	file := filepath.Join(t.TempDir(), "builders.yaml")
	src := "- platform: linux/amd64\n  address: tcp://file-amd64:1234\n  tls: {ca: ca.pem}\n- platform: windows\n  address: tcp://file-win:1234\n"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	tls := build.TLSOptions{CACert: "/flags/ca.pem"}
	f := nodeFlags{buildersFile: file, nodes: []string{"windows=tcp://flag-win:1234", "linux/arm64=unix:///run/arm.sock"}}
	bo := build.Options{Builder: build.ResolveBuilder("", nil)}
	if err := f.apply(&bo, tls); err != nil {
		t.Fatal(err)
	}
	if bo.Builder != (build.Builder{}) || len(bo.Nodes) != 3 {
		t.Fatalf("builder %+v, nodes %v", bo.Builder, bo.Nodes)
	}
	if n := bo.Nodes[0]; n.Builder.TLS.CACert != filepath.Join(filepath.Dir(file), "ca.pem") {
		t.Errorf("file node TLS %+v", n.Builder.TLS)
	}
	if n := bo.Nodes[1]; n.String() != "windows=tcp://flag-win:1234" || n.Builder.TLS != tls {
		t.Errorf("--node did not replace the file's windows node: %+v", n)
	}
	if n := bo.Nodes[2]; n.Builder.TLS != (build.TLSOptions{}) {
		t.Errorf("unix node got TLS: %+v", n.Builder.TLS)
	}
	// An explicit --builder stays as the fallback, without the TLS flags when it is not tcp://.
	bo = build.Options{Builder: build.ResolveBuilder("unix:///run/bk.sock", nil)}
	bo.Builder.TLS = tls
	if err := (&nodeFlags{nodes: []string{"windows=tcp://w:1"}}).apply(&bo, tls); err != nil || bo.Builder.Addr != "unix:///run/bk.sock" || bo.Builder.TLS != (build.TLSOptions{}) {
		t.Errorf("fallback %+v, err %v", bo.Builder, err)
	}
	for _, bad := range []nodeFlags{{nodes: []string{"windows"}}, {buildersFile: file + ".missing"}} {
		bo := build.Options{}
		if err := bad.apply(&bo, tls); !errors.Is(err, ErrUsage) {
			t.Errorf("%+v: err = %v, want ErrUsage", bad, err)
		}
	}
	// Without nodes nothing changes.
	bo = build.Options{Builder: build.ResolveBuilder("", nil)}
	if err := (&nodeFlags{}).apply(&bo, tls); err != nil || bo.Builder.Source != build.SourceDefault || bo.Nodes != nil {
		t.Errorf("no nodes: %+v, err %v", bo, err)
	}
}

func TestParseNode(t *testing.T) {
	mustNode := func(t *testing.T, s string) build.Node {
		t.Helper()
		n, err := parseNode(s, build.TLSOptions{CACert: "ca.pem"})
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
		n, err := parseNode(in, build.TLSOptions{})
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if got := build.FormatNodePlatform(n.Platform); got != want || n.Builder.Source != build.SourceNode {
			t.Errorf("%q: platform %q source %q, want %q", in, got, n.Builder.Source, want)
		}
	}
	for _, in := range []string{"windows", "windows=", "=tcp://x:1", "linux/amd64/v1/x=tcp://x:1", "Lin ux=tcp://x:1"} {
		if _, err := parseNode(in, build.TLSOptions{}); !errors.Is(err, build.ErrInvalidNode) {
			t.Errorf("%q: err = %v, want ErrInvalidNode", in, err)
		}
	}
	if n := mustNode(t, "linux/amd64=unix:///s"); n.Builder.TLS != (build.TLSOptions{}) {
		t.Error("a unix:// node took the TLS flags")
	}
	if n := mustNode(t, "windows=tcp://win:1234"); n.Builder.TLS.CACert != "ca.pem" {
		t.Error("a tcp:// node lacks the TLS flags")
	}
}
