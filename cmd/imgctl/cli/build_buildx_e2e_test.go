package cli

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docker/buildx/store"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/imgctl/imgctl/build/buildx"
	"github.com/imgctl/imgctl/internal/testing/buildtest"
)

// TestBuildBuildxE2E builds through buildx builder instances that buildx's
// own store API wrote, with the remote driver against real buildkitd
// daemons: a two-node instance (one node for linux/amd64 and linux/arm64,
// one for windows/amd64) and a one-node instance selected with
// $BUILDX_BUILDER, and a TLS daemon reached with the remote driver's
// cacert/cert/key driver-opts. Each daemon's build history shows what it
// solved. A node's address is buildx://INSTANCE/NODE, which BuildKit's
// client.New cannot dial: every build here went through buildx's driver.
func TestBuildBuildxE2E(t *testing.T) {
	start := time.Now()
	host, ctxDir, args := nodesFixture(t, "hello from a buildx builder\n")
	t.Setenv(buildx.EnvBuilder, "")

	linux, windows := startDaemons(t, host)
	buildxStore(t,
		&store.NodeGroup{Name: "pool", Driver: "remote", Nodes: []store.Node{
			{Name: "pool-linux", Endpoint: linux.Addr, Platforms: []ocispecs.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}}},
			{Name: "pool-windows", Endpoint: windows.Addr, Platforms: []ocispecs.Platform{{OS: "windows", Architecture: "amd64"}}},
		}},
		&store.NodeGroup{Name: "solo", Driver: "remote", Nodes: []store.Node{{Name: "solo0", Endpoint: linux.Addr}}},
	)

	t.Run("unknown instance", func(t *testing.T) {
		_, stderr, code := run(t, append([]string{"build", "--builder", "nope", "-t", host + "/bx:nope"}, append(args, ctxDir)...)...)
		if code != ExitError || !strings.Contains(stderr, `no such buildx builder "nope"`) || !strings.Contains(stderr, "known: pool (remote), solo (remote)") {
			t.Errorf("exit %d, stderr:\n%s", code, stderr)
		}
	})

	tag := host + "/bx:pool"
	out, stderr, code := run(t, append([]string{"build", "--builder", "pool", "--progress", "plain", "-t", tag}, append(args, ctxDir)...)...)
	if code != 0 {
		t.Fatalf("build exit %d\nstdout:\n%s\nstderr:\n%s", code, out, tail(stderr, 60))
	}
	t.Run("one index", func(t *testing.T) {
		want := []string{"linux/amd64", "linux/arm64", "windows/amd64:" + buildtest.OSVersionLTSC2022}
		if plats := indexPlatforms(t, tag); !slices.Equal(plats, want) {
			t.Errorf("index platforms = %v, want %v", plats, want)
		}
	})
	t.Run("each node did its part", func(t *testing.T) {
		for _, label := range []string{"[linux/amd64,linux/arm64] ", "[windows/amd64] "} {
			if !strings.Contains(stderr, label) {
				t.Errorf("progress lacks %q vertices:\n%s", label, tail(stderr, 40))
			}
		}
		if got := solvedPlatforms(t, linux); !slices.Equal(got, []string{"linux/amd64,linux/arm64"}) {
			t.Errorf("pool-linux solved %v", got)
		}
		if got := solvedPlatforms(t, windows); !slices.Equal(got, []string{"windows(" + buildtest.OSVersionLTSC2022 + ")/amd64"}) {
			t.Errorf("pool-windows solved %v", got)
		}
	})
	t.Run("one node from BUILDX_BUILDER", func(t *testing.T) {
		t.Setenv(buildx.EnvBuilder, "solo")
		tag := host + "/bx:solo"
		out, stderr, code := run(t, append([]string{"build", "-t", tag}, append(args, ctxDir)...)...)
		if code != 0 {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, tail(stderr, 40))
		}
		if plats := indexPlatforms(t, tag); len(plats) != 3 {
			t.Errorf("index platforms = %v", plats)
		}
		want := []string{"linux/amd64,linux/arm64", "linux/amd64,linux/arm64", "windows(" + buildtest.OSVersionLTSC2022 + ")/amd64"}
		if got := solvedPlatforms(t, linux); !slices.Equal(got, want) {
			t.Errorf("solo0 (the pool's linux daemon) solved %v, want %v", got, want)
		}
		if got := solvedPlatforms(t, windows); len(got) != 1 {
			t.Errorf("the windows daemon solved again: %v", got)
		}
	})
	t.Run("remote node with TLS driver-opts", func(t *testing.T) {
		d := buildtest.New(t, buildtest.Options{TLS: true, InsecureRegistries: []string{host}})
		buildxStore(t, &store.NodeGroup{Name: "secure", Driver: "remote", Nodes: []store.Node{{Name: "secure0", Endpoint: d.Addr,
			DriverOpts: map[string]string{"cacert": d.TLS.CACert, "cert": d.TLS.Cert, "key": d.TLS.Key}}}})
		tag := host + "/bx:secure"
		out, stderr, code := run(t, append([]string{"build", "--builder", "secure", "-t", tag}, append(args, ctxDir)...)...)
		if code != 0 {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, tail(stderr, 40))
		}
		if got := solvedPlatforms(t, d); len(got) != 2 {
			t.Errorf("the TLS daemon solved %v, want the linux and the windows variant", got)
		}
	})
	t.Logf("buildx e2e total %s", time.Since(start).Round(time.Millisecond))
}
