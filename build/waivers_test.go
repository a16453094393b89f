package build

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moby/buildkit/client"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/imgctl/imgctl/build/nodes"
	"github.com/imgctl/imgctl/build/variant"
	"github.com/imgctl/imgctl/lint"
)

// mustNode reads a --node value, PLATFORM=ADDR; a tcp:// node gets TLS.
func mustNode(t *testing.T, s string) nodes.Node {
	t.Helper()
	ps, addr, _ := strings.Cut(s, "=")
	p, err := nodes.ParseNodePlatform(ps)
	if err != nil {
		t.Fatal(err)
	}
	b := nodes.Builder{Addr: addr, Source: nodes.SourceNodeOption}
	if strings.HasPrefix(addr, "tcp://") {
		b.TLS = nodes.TLSOptions{CACert: "ca.pem"}
	}
	return nodes.Node{Platform: p, Builder: b}
}

// workers lists one worker with a platform of each OS.
func workers(oses ...string) []*client.WorkerInfo {
	w := &client.WorkerInfo{ID: "w0"}
	for _, os := range oses {
		w.Platforms = append(w.Platforms, ocispecs.Platform{OS: os, Architecture: "amd64"})
	}
	return []*client.WorkerInfo{w}
}

// TestWaiveRunInWindows: a RUN in a Windows stage mapped to a Windows node
// stops nothing until the node's workers are known; then only a native
// Windows node lifts it, and a fallback builder never does.
func TestWaiveRunInWindows(t *testing.T) {
	dir := t.TempDir()
	df := filepath.Join(dir, "Dockerfile")
	src := "FROM scratch AS final-linux\nFROM mcr.microsoft.com/windows/servercore:ltsc2022 AS final-windows\nRUN msiexec /i app.msi\nFROM final-${TARGETOS}\n"
	if err := os.WriteFile(df, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	o := Options{ContextDir: dir, Variants: variant.VariantOptions{Windows: []string{"ltsc2022"}},
		Nodes: []nodes.Node{mustNode(t, "linux=tcp://l:1"), mustNode(t, "windows=tcp://w:1")}}
	p, err := Prepare(o)
	var pe *lint.Error
	if !errors.As(err, &pe) || pe.Findings[0].Rule != lint.RuleRunInWindowsStage || !p.waivable(err) {
		t.Fatalf("Prepare: %v", err)
	}
	if err := p.applyWaivers([][]*client.WorkerInfo{workers("linux"), workers("linux")}); !errors.As(err, &pe) {
		t.Errorf("Linux stand-in: err = %v, want the RUN finding", err)
	}
	if err := p.applyWaivers([][]*client.WorkerInfo{workers("linux"), workers("windows")}); err != nil {
		t.Errorf("native Windows node: err = %v, want nil", err)
	}
	// Without a Windows node the finding stops the build before any daemon.
	o.Nodes = []nodes.Node{mustNode(t, "linux=tcp://l:1"), mustNode(t, "windows/amd64:10.0.26100=tcp://w:1")}
	o.Builder = nodes.Builder{Addr: "tcp://fb:1"}
	if p, err = Prepare(o); p.waivable(err) || err == nil {
		t.Errorf("fallback builder: waivable, err = %v", err)
	}
	if f := nodes.WaiveRunInWindows(pe.Findings, false); len(f) != len(pe.Findings) {
		t.Error("waived without a native node")
	}
}
