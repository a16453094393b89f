package buildx

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docker/buildx/store"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/imgctl/imgctl/build/nodes"
	"github.com/imgctl/imgctl/build/variant"
	"github.com/imgctl/imgctl/internal/testing/buildtest"
)

// newStore points BUILDX_CONFIG at a fresh directory and saves the node
// groups there with buildx's own store API.
func newStore(t *testing.T, ngs ...*store.NodeGroup) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("BUILDX_CONFIG", dir)
	if err := buildtest.SaveBuildxInstances(dir, ngs...); err != nil {
		t.Fatal(err)
	}
	return dir
}

func plat(os, arch, osVersion string) ocispecs.Platform {
	return ocispecs.Platform{OS: os, Architecture: arch, OSVersion: osVersion}
}

// nodeStrings formats nodes as --node takes them, sorted.
func nodeStrings(ns []nodes.Node) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.String())
	}
	slices.Sort(out)
	return out
}

func TestInstanceName(t *testing.T) {
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
	for _, tc := range []struct {
		name, flag   string
		getenv       func(string) string
		want, source string
	}{
		{"flag name", "pool", env(EnvBuilder, "other"), "pool", nodes.SourceOption},
		{"flag address", "tcp://bk:1234", env(EnvBuilder, "other"), "", ""},
		{"flag docker-container address", "docker-container://buildx_buildkit_pool0", nil, "", ""},
		{"env name", "", env(EnvBuilder, "pool"), "pool", "$BUILDX_BUILDER"},
		{"BUILDKIT_HOST wins over BUILDX_BUILDER", "", env(EnvBuilder, "pool", nodes.EnvBuildkitHost, "unix:///x.sock"), "", ""},
		{"nothing", "", env(), "", ""},
		{"no environment", "", nil, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, src := InstanceName(tc.flag, tc.getenv)
			if got != tc.want || src != tc.source {
				t.Errorf("InstanceName(%q) = %q, %q; want %q, %q", tc.flag, got, src, tc.want, tc.source)
			}
		})
	}
}

// TestLoadRemoteNodes reads a two-node remote instance: each node's
// platforms map onto imgctl nodes, the first node is the fallback, and a
// third node without platforms is reported unused. Nothing is contacted.
func TestLoadRemoteNodes(t *testing.T) {
	dir := newStore(t, &store.NodeGroup{Name: "pool", Driver: "remote", Nodes: []store.Node{
		{Name: "linux0", Endpoint: "unix:///run/bk-linux.sock", Platforms: []ocispecs.Platform{plat("linux", "amd64", ""), plat("linux", "arm64", "")}},
		{Name: "win2022", Endpoint: "tcp://win2022:1234", Platforms: []ocispecs.Platform{plat("windows", "amd64", "10.0.20348.0")},
			DriverOpts: map[string]string{"cacert": "/certs/ca.pem", "servername": "bk-win"}},
		{Name: "spare", Endpoint: "tcp://spare:1234"},
	}})
	in, err := Load(context.Background(), "pool")
	if err != nil {
		t.Fatal(err)
	}
	if in.Name != "pool" || in.Driver != "remote" || in.Dir != dir || len(in.Nodes) != 3 {
		t.Fatalf("instance = %+v", in)
	}
	ns, fallback, unused := in.BuildNodes()
	want := []string{
		"linux/amd64=buildx://pool/linux0",
		"linux/arm64=buildx://pool/linux0",
		"windows/amd64:10.0.20348.0=buildx://pool/win2022",
	}
	if got := nodeStrings(ns); !slices.Equal(got, want) {
		t.Errorf("nodes = %v, want %v", got, want)
	}
	if fallback.Addr != "buildx://pool/linux0" || fallback.Dialer == nil || fallback.Dialer != ns[0].Builder.Dialer {
		t.Errorf("fallback = %+v, want the first node with its dialer", fallback)
	}
	if !slices.Equal(unused, []string{"spare"}) {
		t.Errorf("unused = %v", unused)
	}
	win := in.Nodes[1]
	if win.Endpoint != "tcp://win2022:1234" || win.DriverOpts["servername"] != "bk-win" ||
		!strings.Contains(win.Builder.String(), "driver remote, endpoint tcp://win2022:1234") {
		t.Errorf("windows node = %+v (%s)", win, win.Builder)
	}
	// The mapping is what imgctl's scheduler takes: the Windows variant
	// goes to the Windows node, linux to the first.
	vs, err := variant.PlanVariants(variant.VariantOptions{Platforms: []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}, {OS: "windows", Architecture: "amd64"}}, Windows: []string{"ltsc2022"}})
	if err != nil {
		t.Fatal(err)
	}
	_, as, err := nodes.AssignNodes(vs, ns, fallback)
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != 2 || as[0].Builder.Addr != "buildx://pool/linux0" || as[1].Builder.Addr != "buildx://pool/win2022" || !as[1].Windows {
		t.Errorf("assignments = %+v", as)
	}
	if err := win.Builder.Validate(); err != nil {
		t.Errorf("validate: %v", err)
	}
	withTLS := win.Builder
	withTLS.TLS = nodes.TLSOptions{CACert: "ca.pem"}
	if err := withTLS.Validate(); !errors.Is(err, nodes.ErrInvalidBuilder) {
		t.Errorf("a buildx node with --tls* flags: %v, want ErrInvalidBuilder", err)
	}
}

// TestLoadSingleNode: one node without platforms is a plain builder for
// every platform.
func TestLoadSingleNode(t *testing.T) {
	newStore(t, &store.NodeGroup{Name: "solo", Driver: "docker-container", Nodes: []store.Node{{Name: "solo0", Endpoint: "unix:///nonexistent/docker.sock"}}})
	in, err := Load(context.Background(), "SOLO") // buildx names are case-insensitive
	if err != nil {
		t.Fatal(err)
	}
	ns, fallback, unused := in.BuildNodes()
	if len(ns) != 0 || len(unused) != 0 || fallback.Addr != "buildx://solo/solo0" || fallback.Dialer == nil {
		t.Errorf("nodes %v, fallback %+v, unused %v", ns, fallback, unused)
	}
	// No Docker daemon answers at the node's endpoint: the build fails
	// naming the node and the endpoint (buildx's docker-container driver
	// asks the Docker API for its container first).
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := nodes.Connect(ctx, fallback); !errors.Is(err, nodes.ErrNoBuilder) || !strings.Contains(err.Error(), "driver docker-container") ||
		!strings.Contains(err.Error(), "/nonexistent/docker.sock") {
		t.Errorf("connect = %v, want ErrNoBuilder naming the driver and the Docker endpoint", err)
	}
}

func TestLoadUnknown(t *testing.T) {
	newStore(t,
		&store.NodeGroup{Name: "pool", Driver: "remote", Nodes: []store.Node{{Name: "pool0", Endpoint: "tcp://a:1"}}},
		&store.NodeGroup{Name: "kube", Driver: "kubernetes", Nodes: []store.Node{{Name: "kube0", Endpoint: "kubernetes:///kube"}}},
	)
	for _, name := range []string{"nope", "not/a/name"} {
		_, err := Load(context.Background(), name)
		if !errors.Is(err, ErrUnknownInstance) || !strings.Contains(err.Error(), "known: kube (kubernetes), pool (remote)") {
			t.Errorf("Load(%q) = %v, want ErrUnknownInstance listing kube and pool", name, err)
		}
	}
	newStore(t)
	if _, err := Load(context.Background(), "pool"); !errors.Is(err, ErrUnknownInstance) || !strings.Contains(err.Error(), "known: none") {
		t.Errorf("empty store: %v", err)
	}
}

func TestLoadUnsupportedDriver(t *testing.T) {
	newStore(t, &store.NodeGroup{Name: "cloud", Driver: "cloud", Nodes: []store.Node{{Name: "cloud0", Endpoint: "cloud://org/b"}}})
	_, err := Load(context.Background(), "cloud")
	if !errors.Is(err, ErrUnsupportedDriver) || !strings.Contains(err.Error(), "remote") {
		t.Errorf("err = %v, want ErrUnsupportedDriver naming the drivers imgctl has", err)
	}
}

// setCurrent records name as the current builder for key, as `docker
// buildx use` does.
func setCurrent(t *testing.T, dir, key, name string, global bool) {
	t.Helper()
	if err := buildtest.SetCurrentBuildx(dir, key, name, global); err != nil {
		t.Fatal(err)
	}
}

// TestCurrent reads the builder `docker buildx use` selected for the
// current Docker context (the default context's key is its Docker
// endpoint), and nothing when none was, when the selection is another
// context's, or when there is no store.
func TestCurrent(t *testing.T) {
	const host = "unix:///run/imgctl-test/docker.sock"
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	t.Setenv("DOCKER_HOST", host)
	t.Setenv("DOCKER_CONTEXT", "")
	pool := &store.NodeGroup{Name: "pool", Driver: "remote", Nodes: []store.Node{{Name: "pool0", Endpoint: "tcp://127.0.0.1:1234"}}}

	t.Setenv("BUILDX_CONFIG", filepath.Join(t.TempDir(), "none"))
	if name, _, err := Current(); err != nil || name != "" {
		t.Fatalf("no store: %q, %v", name, err)
	}
	dir := newStore(t, pool)
	if name, ctx, err := Current(); err != nil || name != "" || ctx != "default" {
		t.Fatalf("nothing selected: %q (context %q), %v", name, ctx, err)
	}
	setCurrent(t, dir, "unix:///other/docker.sock", "pool", false)
	if name, _, err := Current(); err != nil || name != "" {
		t.Fatalf("another context's selection: %q, %v", name, err)
	}
	setCurrent(t, dir, host, "pool", false)
	if name, _, err := Current(); err != nil || name != "pool" {
		t.Fatalf("docker buildx use pool: %q, %v", name, err)
	}
	setCurrent(t, dir, "unix:///other/docker.sock", "pool", true)
	if name, _, err := Current(); err != nil || name != "pool" {
		t.Fatalf("docker buildx use --global pool: %q, %v", name, err)
	}
}

// TestCurrentBuildxCLI: what the real buildx CLI's `buildx create` and
// `buildx use` write is what Current reads: the instance `buildx use`
// selected for the current Docker context, `buildx use --global` across
// contexts, and nothing after `buildx use default` (the context's own
// docker-driver builder, which imgctl cannot drive).
func TestCurrentBuildxCLI(t *testing.T) {
	buildtest.SkipShort(t, buildtest.NeedsBuildx)
	bin, err := buildtest.BuildxCLI()
	if err != nil {
		t.Fatal(err)
	}
	const host = "unix:///run/imgctl-test/docker.sock"
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	t.Setenv("BUILDX_CONFIG", t.TempDir())
	t.Setenv("DOCKER_HOST", host)
	t.Setenv("DOCKER_CONTEXT", "")
	buildx := func(args ...string) {
		t.Helper()
		if out, err := exec.CommandContext(t.Context(), bin, args...).CombinedOutput(); err != nil {
			t.Fatalf("buildx %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	buildx("create", "--name", "pool", "--driver", "remote", "tcp://127.0.0.1:1234")
	buildx("create", "--name", "other", "--driver", "remote", "tcp://127.0.0.1:1235")
	for _, step := range []struct {
		args []string
		want string
	}{
		{[]string{"use", "pool"}, "pool"},
		{[]string{"use", "--global", "other"}, "other"},
		{[]string{"use", "default"}, ""},
	} {
		buildx(step.args...)
		if name, ctx, err := Current(); err != nil || name != step.want || ctx != "default" {
			t.Fatalf("after buildx %s: %q (context %q), %v; want %q", strings.Join(step.args, " "), name, ctx, err, step.want)
		}
	}
	ng, err := Load(context.Background(), "pool")
	if err != nil || len(ng.Nodes) != 1 || ng.Driver != "remote" || ng.Nodes[0].Endpoint != "tcp://127.0.0.1:1234" {
		t.Fatalf("Load(pool) of the instance buildx create wrote: %+v, %v", ng, err)
	}
}
