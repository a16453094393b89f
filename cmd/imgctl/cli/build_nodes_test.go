package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/imgctl/imgctl/build"
	"github.com/imgctl/imgctl/build/nodes"
)

// TestNodeFlags: --node and --builders fill build.Options.Nodes through
// nodes.Select (whose tests cover the precedence); --node wins over the
// file, an explicit --builder stays the fallback without the --tls* flags,
// and Select's errors come back as usage errors that name the flag.
func TestNodeFlags(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "builders.yaml")
	src := "- platform: linux/amd64\n  address: tcp://file-amd64:1234\n  tls: {ca: ca.pem}\n- platform: windows\n  address: tcp://file-win:1234\n"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	tls := nodes.TLSOptions{CACert: "/flags/ca.pem"}
	// An address as --builder: no buildx store is read.
	const builder = "unix:///run/bk.sock"
	o := &buildOptions{builder: builder, tls: tls, nodeFlags: nodeFlags{buildersFile: file, nodes: []string{"windows=tcp://flag-win:1234"}}}
	var bo build.Options
	if err := o.selectBuilder(ctx, &bo, &strings.Builder{}); err != nil {
		t.Fatal(err)
	}
	if got := nodeStrings(bo.Nodes); strings.Join(got, " ") != "linux/amd64=tcp://file-amd64:1234 windows=tcp://flag-win:1234" ||
		bo.Nodes[1].Builder.TLS != tls || bo.Builder.Addr != builder || bo.Builder.TLS != (nodes.TLSOptions{}) {
		t.Errorf("nodes %v, fallback %+v", got, bo.Builder)
	}
	for _, tc := range []struct {
		o    buildOptions
		want string
	}{
		{buildOptions{nodeFlags: nodeFlags{nodes: []string{"windows"}}}, `usage: --node windows: invalid node: want PLATFORM=ADDR`},
		{buildOptions{tls: nodes.TLSOptions{Cert: "c.pem"}, nodeFlags: nodeFlags{nodes: []string{"linux=tcp://l:1"}}},
			"usage: --node linux=tcp://l:1: invalid builder tcp://l:1 (from --node): the client certificate and key go together"},
		{buildOptions{nodeFlags: nodeFlags{buildersFile: file + ".missing"}}, "usage: --builders: invalid node: reading builders file: "},
		{buildOptions{tls: tls}, "usage: invalid builder " + builder + " (from --builder): TLS options need a tcp:// address"},
	} {
		tc.o.builder = builder
		var bo build.Options
		err := tc.o.selectBuilder(ctx, &bo, &strings.Builder{})
		if !errors.Is(err, ErrUsage) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want ErrUsage reading %q", tc.o, err, tc.want)
		}
	}
}
