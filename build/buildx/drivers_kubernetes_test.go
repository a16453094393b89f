//go:build !nokubernetes

package buildx

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docker/buildx/store"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/imgctl/imgctl/build/nodes"
)

// kubeconfig writes a kubeconfig whose API server is a closed port.
func kubeconfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: ctx, context: {cluster: c, user: u, namespace: default}}]
current-context: ctx
`
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// kubeEndpoint is the endpoint docker buildx create --driver kubernetes
// stores for a node.
func kubeEndpoint(instance, node, kubeconfig string) string {
	return "kubernetes:///" + instance + "?deployment=" + node + "&kubeconfig=" + kubeconfig
}

// TestLoadKubernetes maps a kubernetes instance (cannot run here: there is
// no cluster) and checks that its driver-opts reach buildx's kubernetes
// driver, and that it fails clearly when the driver cannot be set up or
// the cluster cannot be reached.
func TestLoadKubernetes(t *testing.T) {
	kc := kubeconfig(t)
	opts := map[string]string{"namespace": "build", "replicas": "2", "nodeselector": "kubernetes.io/arch=amd64"}
	ng := &store.NodeGroup{Name: "kube", Driver: "kubernetes", Nodes: []store.Node{
		{Name: "kube-amd64", Endpoint: kubeEndpoint("kube", "kube-amd64", kc), DriverOpts: opts,
			Platforms: []ocispecs.Platform{plat("linux", "amd64", "")}, BuildkitdFlags: []string{"--allow-insecure-entitlement=network.host"}},
		{Name: "kube-arm64", Endpoint: kubeEndpoint("kube", "kube-arm64", kc), DriverOpts: map[string]string{"namespace": "build", "nodeselector": "kubernetes.io/arch=arm64"},
			Platforms: []ocispecs.Platform{plat("linux", "arm64", "")}},
	}}
	newStore(t, ng)
	in, err := Load(context.Background(), "kube")
	if err != nil {
		t.Fatal(err)
	}
	ns, fallback, _ := in.BuildNodes()
	want := []string{"linux/amd64=buildx://kube/kube-amd64", "linux/arm64=buildx://kube/kube-arm64"}
	if got := nodeStrings(ns); !slices.Equal(got, want) || fallback.Addr != "buildx://kube/kube-amd64" {
		t.Errorf("nodes = %v, fallback %s; want %v", got, fallback.Addr, want)
	}
	if got := in.Nodes[0].DriverOpts; got["namespace"] != "build" || got["replicas"] != "2" || got["nodeselector"] != "kubernetes.io/arch=amd64" {
		t.Errorf("driver opts the driver got = %v", got)
	}

	t.Run("cluster unreachable", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		b := in.Nodes[0].Builder
		_, err := nodes.Connect(ctx, b)
		if !errors.Is(err, nodes.ErrNoBuilder) || !strings.Contains(err.Error(), "buildx://kube/kube-amd64") ||
			!strings.Contains(err.Error(), "driver kubernetes") || !strings.Contains(err.Error(), "127.0.0.1:1") {
			t.Errorf("connect = %v, want ErrNoBuilder naming the node, its driver and the API server", err)
		}
	})
	t.Run("bad driver-opt", func(t *testing.T) {
		bad := *ng
		bad.Nodes = []store.Node{ng.Nodes[0]}
		bad.Nodes[0].DriverOpts = map[string]string{"replicas": "many"}
		newStore(t, &bad)
		_, err := Load(context.Background(), "kube")
		if !errors.Is(err, ErrDriver) || !strings.Contains(err.Error(), `node "kube-amd64" (driver kubernetes)`) || !strings.Contains(err.Error(), "many") {
			t.Errorf("err = %v, want ErrDriver naming the node and the bad value", err)
		}
	})
	t.Run("no kubeconfig", func(t *testing.T) {
		none := *ng
		none.Nodes = []store.Node{ng.Nodes[0]}
		none.Nodes[0].Endpoint = kubeEndpoint("kube", "kube-amd64", filepath.Join(t.TempDir(), "missing"))
		newStore(t, &none)
		t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "missing"))
		_, err := Load(context.Background(), "kube")
		if !errors.Is(err, ErrDriver) || !strings.Contains(err.Error(), "Kubernetes") || !strings.Contains(err.Error(), "missing: no such file") {
			t.Errorf("err = %v, want ErrDriver naming the missing kubeconfig", err)
		}
	})
}
