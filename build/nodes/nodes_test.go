package nodes

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/containerd/platforms"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/moby/buildkit/client"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/imgctl/imgctl/build/variant"
	"github.com/imgctl/imgctl/findings"
	"github.com/imgctl/imgctl/lint"
	"github.com/imgctl/imgctl/platform"
)

// mustNode makes the node that imgctl build --node PLATFORM=ADDR makes,
// with the --tls* flags' CA for a tcp:// address.
func mustNode(t *testing.T, s string) Node {
	t.Helper()
	ps, addr, _ := strings.Cut(s, "=")
	p, err := ParseNodePlatform(ps)
	if err != nil {
		t.Fatal(err)
	}
	b := Builder{Addr: addr, Source: SourceNodeOption}
	if strings.HasPrefix(addr, "tcp://") {
		b.TLS = TLSOptions{CACert: "ca.pem"}
	}
	return Node{Platform: p, Builder: b}
}

func testVariants(t *testing.T) []variant.Variant {
	t.Helper()
	vs, err := variant.PlanVariants(variant.VariantOptions{Windows: []string{"ltsc2022", "ltsc2025"}})
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

func names(vs []variant.Variant) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Name+"@"+formatPlatforms(v.Platforms))
	}
	return out
}

func TestAssignNodes(t *testing.T) {
	vs := testVariants(t)
	// Linux platforms sharing a node stay in one solve; each Windows variant goes to the windows node.
	nodes := []Node{mustNode(t, "linux/amd64=tcp://a:1"), mustNode(t, "linux/arm64=tcp://a:1"), mustNode(t, "windows=tcp://w:1")}
	got, as, err := AssignNodes(vs, nodes, Builder{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Name != "linux" || len(got[0].Platforms) != 2 || as[0].Builder.Addr != "tcp://a:1" ||
		as[0].Label != "linux/amd64,linux/arm64" || as[0].Windows {
		t.Errorf("linux: %v %+v", names(got), as)
	}
	for i := 1; i < 3; i++ {
		if as[i].Builder.Addr != "tcp://w:1" || !as[i].Windows || as[i].Label != "windows" || !got[i].IsWindows() {
			t.Errorf("variant %s: %+v", got[i].Name, as[i])
		}
	}
	// Different nodes split the linux solve; a release node beats the OS node.
	nodes = []Node{mustNode(t, "linux/amd64=tcp://a:1"), mustNode(t, "linux=tcp://b:1"),
		mustNode(t, "windows=tcp://w:1"), mustNode(t, "ltsc2025=tcp://w25:1")}
	got, as, err = AssignNodes(vs, nodes, Builder{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"linux-amd64@linux/amd64", "linux-arm64@linux/arm64", "ltsc2022@windows(10.0.20348)/amd64", "ltsc2025@windows(10.0.26100)/amd64"}
	if !slices.Equal(names(got), want) {
		t.Errorf("variants %v, want %v", names(got), want)
	}
	var addrs []string
	for _, a := range as {
		addrs = append(addrs, a.Builder.Addr)
	}
	if !slices.Equal(addrs, []string{"tcp://a:1", "tcp://b:1", "tcp://w:1", "tcp://w25:1"}) || got[0].IsWindows() {
		t.Errorf("addresses %v", addrs)
	}
}

func TestAssignNodesFallback(t *testing.T) {
	vs := testVariants(t)
	_, _, err := AssignNodes(vs, []Node{mustNode(t, "linux/amd64=tcp://a:1")}, Builder{})
	if !errors.Is(err, ErrUnmappedPlatforms) || !strings.Contains(err.Error(), "linux/arm64, windows/amd64:10.0.20348, windows/amd64:10.0.26100") {
		t.Errorf("err = %v", err)
	}
	fb := Builder{Addr: "unix:///fb.sock", Source: SourceOption}
	got, as, err := AssignNodes(vs, []Node{mustNode(t, "windows=tcp://w:1")}, fb)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || as[0].Builder != fb || as[0].Label != FallbackLabel || as[0].Windows || as[1].Builder.Addr != "tcp://w:1" {
		t.Errorf("%v %+v", names(got), as)
	}
	// Without nodes every variant goes to the builder, unlabelled.
	got, as, err = AssignNodes(vs, nil, fb)
	if err != nil || len(got) != 3 || as[2] != (Assignment{Builder: fb}) {
		t.Errorf("%v %+v %v", names(got), as, err)
	}
	for _, bad := range [][]Node{
		{mustNode(t, "windows=tcp://w:1"), mustNode(t, "windows=tcp://x:1")},
		{mustNode(t, "windows=tcp://w:1"), {Platform: v1.Platform{OS: "linux"}, Builder: Builder{Addr: "tcp://w:1"}}},
	} {
		if _, _, err := AssignNodes(vs, bad, fb); !errors.Is(err, ErrInvalidNode) {
			t.Errorf("%v: err = %v, want ErrInvalidNode", bad, err)
		}
	}
}

func workers(oses ...string) []*client.WorkerInfo {
	w := &client.WorkerInfo{ID: "w0"}
	for _, os := range oses {
		w.Platforms = append(w.Platforms, ocispecs.Platform{OS: os, Architecture: "amd64"})
	}
	return []*client.WorkerInfo{w}
}

func TestNativeWindows(t *testing.T) {
	win := Assignment{Builder: Builder{Addr: "tcp://w:1"}, Windows: true}
	for _, c := range []struct {
		a    Assignment
		ws   []*client.WorkerInfo
		want bool
	}{
		{win, workers("windows"), true},
		{win, workers("linux", "windows"), true},
		{win, workers("linux"), false}, // a Linux daemon standing in for the Windows node
		{win, nil, false},
		{Assignment{Builder: win.Builder}, workers("windows"), false}, // not mapped as a Windows node
	} {
		if got := NativeWindows(c.a, c.ws); got != c.want {
			t.Errorf("NativeWindows(%+v, %d workers) = %t", c.a, len(c.ws), got)
		}
	}
}

// TestWaiveRunInWindows drops only the RUN-in-a-Windows-stage findings,
// and only for a native Windows node.
func TestWaiveRunInWindows(t *testing.T) {
	fs := []findings.Finding{{Rule: lint.RuleRunInWindowsStage}, {Rule: "other"}, {Rule: lint.RuleRunInWindowsStage}}
	if got := WaiveRunInWindows(fs, false); len(got) != len(fs) {
		t.Errorf("waived without a native node: %v", got)
	}
	if got := WaiveRunInWindows(fs, true); len(got) != 1 || got[0].Rule != "other" || len(fs) != 3 {
		t.Errorf("native node: %v (input %v)", got, fs)
	}
}

// formatPlatforms writes platforms as BuildKit's platform attribute reads
// them (package build's own), windows(10.0.20348)/amd64 with an os.version.
func formatPlatforms(ps []v1.Platform) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = platforms.FormatAll(platforms.Normalize(platform.ToSpec(p)))
	}
	return strings.Join(s, ",")
}
