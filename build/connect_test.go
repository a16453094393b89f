package build

import (
	"strings"
	"sync"
	"testing"

	"github.com/moby/buildkit/client"
	digest "github.com/opencontainers/go-digest"
)

// TestRelabel: one display fed by two daemons keeps their vertices apart
// and names the node; relabelling happens in each solve's own forwarder.
func TestRelabel(t *testing.T) {
	d := digest.FromString("same step")
	in := digest.FromString("input")
	mk := func() *client.SolveStatus {
		return &client.SolveStatus{
			Vertexes: []*client.Vertex{{Digest: d, Name: "[final 1/2] COPY hello.txt", Inputs: []digest.Digest{in}}},
			Statuses: []*client.VertexStatus{{ID: "x", Vertex: d}},
			Logs:     []*client.VertexLog{{Vertex: d}},
			Warnings: []*client.VertexWarning{{Vertex: d}},
		}
	}
	a, b := mk(), mk()
	var wg sync.WaitGroup
	wg.Go(func() { relabel(a, "linux/amd64,linux/arm64") })
	wg.Go(func() { relabel(b, "windows") })
	wg.Wait()
	if a.Vertexes[0].Digest == b.Vertexes[0].Digest || a.Vertexes[0].Digest == d {
		t.Error("vertex digests of two nodes collide")
	}
	if !strings.HasPrefix(b.Vertexes[0].Name, "[windows] [final 1/2]") {
		t.Errorf("name %q", b.Vertexes[0].Name)
	}
	v := a.Vertexes[0].Digest
	if a.Statuses[0].Vertex != v || a.Logs[0].Vertex != v || a.Warnings[0].Vertex != v || a.Vertexes[0].Inputs[0] == in {
		t.Errorf("references not moved with the vertex: %+v", a)
	}
}
