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
