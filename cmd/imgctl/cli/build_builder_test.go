package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docker/buildx/store"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/imgctl/imgctl/build"
	"github.com/imgctl/imgctl/build/buildx"
	"github.com/imgctl/imgctl/build/nodes"
	"github.com/imgctl/imgctl/internal/testing/buildtest"
)

// buildxStore saves the instances into a fresh BUILDX_CONFIG, under a
// fresh Docker config whose default context's endpoint is dockerHost.
func buildxStore(t *testing.T, ngs ...*store.NodeGroup) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("BUILDX_CONFIG", dir)
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	t.Setenv("DOCKER_HOST", dockerHost)
	t.Setenv("DOCKER_CONTEXT", "")
	if err := buildtest.SaveBuildxInstances(dir, ngs...); err != nil {
		t.Fatal(err)
	}
	return dir
}

const dockerHost = "unix:///run/imgctl-test/docker.sock"

// nodeStrings formats nodes as --node takes them, in order.
func nodeStrings(ns []nodes.Node) []string {
	out := []string{}
	for _, n := range ns {
		out = append(out, n.String())
	}
	return out
}

// TestBuildxBuilderFlags: --builder NAME and $BUILDX_BUILDER read a buildx
// instance into nodes; a builders file entry and a --node replace its node
// of the same platform; an address or $BUILDKIT_HOST never reads the store.
func TestBuildxBuilderFlags(t *testing.T) {
	dir := buildxStore(t, &store.NodeGroup{Name: "pool", Driver: "remote", Nodes: []store.Node{
		{Name: "lin", Endpoint: "unix:///run/lin.sock", Platforms: []ocispecs.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}}},
		{Name: "win", Endpoint: "tcp://win:1234", Platforms: []ocispecs.Platform{{OS: "windows", Architecture: "amd64"}}},
	}})
	ctx := context.Background()
	t.Setenv(nodes.EnvBuildkitHost, "")
	t.Setenv(buildx.EnvBuilder, "")

	resolve := func(t *testing.T, o *buildOptions) (build.Options, error) {
		t.Helper()
		var bo build.Options
		err := o.selectBuilder(ctx, &bo, &strings.Builder{})
		return bo, err
	}
	t.Run("instance", func(t *testing.T) {
		bo, err := resolve(t, &buildOptions{builder: "pool"})
		if err != nil {
			t.Fatal(err)
		}
		got := nodeStrings(bo.Nodes)
		want := "linux/amd64=buildx://pool/lin linux/arm64=buildx://pool/lin windows/amd64=buildx://pool/win"
		if strings.Join(got, " ") != want || bo.Builder.Addr != "buildx://pool/lin" || bo.Builder.Dialer == nil {
			t.Errorf("nodes %v, fallback %+v", got, bo.Builder)
		}
	})
	t.Run("file and --node replace the instance's nodes", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "builders.yaml")
		if err := os.WriteFile(file, []byte("- {platform: linux/arm64, address: tcp://file-arm:1234}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		o := &buildOptions{builder: "pool", nodeFlags: nodeFlags{buildersFile: file, nodes: []string{"windows/amd64=tcp://flag-win:1234"}}}
		bo, err := resolve(t, o)
		if err != nil {
			t.Fatal(err)
		}
		got := nodeStrings(bo.Nodes)
		want := "linux/amd64=buildx://pool/lin linux/arm64=tcp://file-arm:1234 windows/amd64=tcp://flag-win:1234"
		if strings.Join(got, " ") != want {
			t.Errorf("nodes = %v, want %s", got, want)
		}
	})
	t.Run("BUILDX_BUILDER", func(t *testing.T) {
		t.Setenv(buildx.EnvBuilder, "pool")
		bo, err := resolve(t, &buildOptions{})
		if err != nil || len(bo.Nodes) != 3 {
			t.Errorf("nodes %v, err %v", bo.Nodes, err)
		}
		t.Setenv(nodes.EnvBuildkitHost, "unix:///run/env.sock")
		bo, err = resolve(t, &buildOptions{})
		if err != nil || bo.Nodes != nil || bo.Builder.Addr != "unix:///run/env.sock" {
			t.Errorf("$BUILDKIT_HOST must win over $BUILDX_BUILDER: %+v, err %v", bo, err)
		}
		bo, err = resolve(t, &buildOptions{builder: "tcp://flag:1234"})
		if err != nil || bo.Nodes != nil || bo.Builder.Addr != "tcp://flag:1234" {
			t.Errorf("an address: %+v, err %v", bo, err)
		}
	})
	t.Run("docker buildx use", func(t *testing.T) {
		bo, err := resolve(t, &buildOptions{})
		if err != nil || bo.Nodes != nil || bo.Builder.Addr != nodes.DefaultBuilderAddress {
			t.Fatalf("nothing selected: the default socket, got %+v, err %v", bo, err)
		}
		// What `docker buildx use pool` writes, through buildx's store API.
		if err := buildtest.SetCurrentBuildx(dir, dockerHost, "pool", false); err != nil {
			t.Fatal(err)
		}
		bo, err = resolve(t, &buildOptions{})
		if err != nil || len(bo.Nodes) != 3 || bo.Builder.Addr != "buildx://pool/lin" {
			t.Errorf("the current builder: nodes %v, fallback %+v, err %v", bo.Nodes, bo.Builder, err)
		}
		t.Setenv(nodes.EnvBuildkitHost, "unix:///run/env.sock")
		if bo, err = resolve(t, &buildOptions{}); err != nil || bo.Builder.Addr != "unix:///run/env.sock" {
			t.Errorf("$BUILDKIT_HOST must win over the current builder: %+v, err %v", bo, err)
		}
	})
	for _, tc := range []struct {
		name string
		o    *buildOptions
		want string
	}{
		{"unknown instance", &buildOptions{builder: "nope"}, `no such buildx builder "nope"`},
		{"TLS flags without tcp nodes", &buildOptions{builder: "pool", tls: nodes.TLSOptions{CACert: "ca.pem"}}, "driver-opts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := resolve(t, tc.o)
			if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want ErrUsage containing %q", err, tc.want)
			}
		})
	}
}
