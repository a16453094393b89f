package kube

import (
	"context"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/imgctl/imgctl/findings"
	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/snapshot"
)

func readFixture(t *testing.T, name string) []Node {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	nodes, err := ReadNodes(f)
	if err != nil {
		t.Fatal(err)
	}
	return nodes
}

func TestReadNodesFixtures(t *testing.T) {
	got := readFixture(t, "nodes-hybrid.json")
	want := []Node{
		{Name: "aks-system-27361542-vmss000000", OS: "linux", Architecture: "amd64", OSImage: "Ubuntu 22.04.5 LTS", Runtime: "containerd://1.7.27-1"},
		{Name: "aks-arm64-31416920-vmss000000", OS: "linux", Architecture: "arm64", OSImage: "Ubuntu 22.04.5 LTS", Runtime: "containerd://2.0.5-1"},
		{Name: "akswin25000000", OS: "windows", Architecture: "amd64", OSImage: "Windows Server 2025 Datacenter", Runtime: "containerd://2.2.7",
			Version: platform.Version{Major: 10, Build: 26100, Revision: 2894, HasRevision: true}},
	}
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("nodes-hybrid.json:\n got %+v\nwant %+v", got, want)
	}
	h, ok := got[2].Host()
	if !ok || platform.Format(h) != "windows/amd64:10.0.26100.2894" {
		t.Fatalf("Host() = %s, %v", platform.Format(h), ok)
	}
}

// TestReadNodesFallbacks reads the labels when nodeInfo lacks a field, and
// the release in osImage when neither gives a build.
func TestReadNodesFallbacks(t *testing.T) {
	in := `{"apiVersion":"v1","kind":"NodeList","items":[
	 {"metadata":{"name":"a","labels":{"kubernetes.io/os":"windows","kubernetes.io/arch":"amd64","node.kubernetes.io/windows-build":"10.0.20348"}},"status":{"nodeInfo":{}}},
	 {"metadata":{"name":"b"},"status":{"nodeInfo":{"operatingSystem":"windows","architecture":"amd64","osImage":"Windows Server 2025 Datacenter"}}},
	 {"metadata":{"name":"c"},"status":{"nodeInfo":{"operatingSystem":"windows","architecture":"amd64"}}}]}`
	nodes, err := ReadNodes(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range nodes {
		h, ok := n.Host()
		got = append(got, platform.Format(h)+map[bool]string{true: "", false: " (unknown)"}[ok])
	}
	want := []string{"windows/amd64:10.0.20348", "windows/amd64:10.0.26100", "unknown (unknown)"}
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("got %q, want %q", got, want)
	}
	single := `{"apiVersion":"v1","kind":"Node","metadata":{"name":"x"},"status":{"nodeInfo":{"operatingSystem":"linux","architecture":"arm64"}}}`
	if nodes, err := ReadNodes(strings.NewReader(single)); err != nil || len(nodes) != 1 || nodes[0].Name != "x" {
		t.Fatalf("single Node: %v %v", nodes, err)
	}
}

func TestReadNodesErrors(t *testing.T) {
	for in, want := range map[string]error{
		`{"kind":"List","items":[`:      ErrInvalidNodes,
		`not json`:                      ErrInvalidNodes,
		`{"kind":"PodList","items":[]}`: ErrInvalidNodes,
		`{"kind":"List","items":[{"kind":"Pod","metadata":{"name":"p"}}]}`: ErrInvalidNodes,
		`{"kind":"List","items":[{"kind":"Node","metadata":{}}]}`:          ErrInvalidNodes,
		`{"apiVersion":"v1","kind":"List","items":[]}`:                     ErrNoNodes,
	} {
		if _, err := ReadNodes(strings.NewReader(in)); !errors.Is(err, want) {
			t.Errorf("ReadNodes(%s) = %v, want %v", in, err, want)
		}
	}
}

func TestRuntimeEngine(t *testing.T) {
	for in, want := range map[string]string{
		"containerd://2.1.4":        platform.ContainerdIndexOrder,
		"containerd://v2.0.0-rc.1":  platform.ContainerdIndexOrder,
		"containerd://2.0.4+azure":  platform.ContainerdIndexOrder,
		"containerd://2.1.6":        platform.ContainerdLTSCFloor,
		"containerd://2.2.7-k3s1":   platform.ContainerdLTSCFloor,
		"containerd://2.3.4":        platform.ContainerdOSFeatures,
		"containerd://2.4.0":        platform.Containerd,
		"containerd://1.7.22+azure": platform.ContainerdLegacy,
		"containerd://1.7.27-1":     platform.ContainerdLegacy,
		"containerd://1.7.18":       "",
		"docker://28.3.2":           platform.Docker,
		"containerd://1.6.36":       "",
		"cri-o://1.33.1":            "",
		"":                          "",
		"containerd://x":            "",
	} {
		e, why := RuntimeEngine(in)
		got := ""
		if e != nil {
			got = e.Name()
		}
		if got != want || (e == nil) == (why == "") {
			t.Errorf("RuntimeEngine(%q) = %q, %q; want %q", in, got, why, want)
		}
	}
}

func loadSnapshot(t *testing.T, entries ...regtest.Entry) *snapshot.Snapshot {
	t.Helper()
	idx := regtest.Must(regtest.Index(entries...))(t)
	s, err := snapshot.LoadIndex(context.Background(), idx, 2)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func rules(fs []findings.Finding) map[string]findings.Severity {
	out := map[string]findings.Severity{}
	for _, f := range fs {
		if out[f.Rule] != findings.Error {
			out[f.Rule] = f.Severity
		}
	}
	return out
}
