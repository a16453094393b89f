package bake

import (
	"slices"
	"sync"
	"testing"

	"github.com/imgctl/imgctl/build/nodes"
)

func mustNodes(t *testing.T, specs ...string) []nodes.Node {
	t.Helper()
	var out []nodes.Node
	for i := 0; i < len(specs); i += 2 {
		p, err := nodes.ParseNodePlatform(specs[i])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, nodes.Node{Platform: p, Builder: nodes.Builder{Addr: specs[i+1]}})
	}
	return out
}

// TestPoolSpreadsTargets: nodes that name a platform once are no pool; a
// pool gives each starting target one node per platform, the one running
// the fewest targets (the first on a tie), so a target stays on one
// daemon when it can and the next goes to the idlest.
func TestPoolSpreadsTargets(t *testing.T) {
	if p := newPool(mustNodes(t, "linux", "tcp://a:1", "windows", "tcp://b:1")); p != nil {
		t.Errorf("one node per platform made a pool: %+v", p)
	}
	p := newPool(mustNodes(t, "linux", "tcp://a:1", "windows", "tcp://a:1", "linux", "tcp://b:1", "windows", "tcp://b:1", "linux/arm64", "tcp://c:1"))
	if p == nil {
		t.Fatal("no pool")
	}
	got := func(ns []nodes.Node) string { return describe(ns) }
	first := p.take()
	if g := got(first); g != "linux=tcp://a:1, windows=tcp://a:1, linux/arm64=tcp://c:1" {
		t.Errorf("first target: %s", g)
	}
	second := p.take()
	if g := got(second); g != "linux=tcp://b:1, windows=tcp://b:1, linux/arm64=tcp://c:1" {
		t.Errorf("second target: %s", g)
	}
	p.release(first)
	if g := got(p.take()); g != "linux=tcp://a:1, windows=tcp://a:1, linux/arm64=tcp://c:1" {
		t.Errorf("after the first ended: %s", g)
	}
	if p.running["tcp://c:1"] != 2 || p.running["tcp://a:1"] != 1 || p.running["tcp://b:1"] != 1 {
		t.Errorf("running %v", p.running)
	}
}

// TestPoolConcurrent: targets taking and releasing at once (under -race)
// leave every count at zero.
func TestPoolConcurrent(t *testing.T) {
	p := newPool(mustNodes(t, "linux", "tcp://a:1", "linux", "tcp://b:1"))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var seen []string
	for range 2 {
		wg.Go(func() {
			for range 100 {
				ns := p.take()
				mu.Lock()
				seen = append(seen, ns[0].Builder.Addr)
				mu.Unlock()
				p.release(ns)
			}
		})
	}
	wg.Wait()
	if p.running["tcp://a:1"] != 0 || p.running["tcp://b:1"] != 0 || len(seen) != 200 || !slices.Contains(seen, "tcp://a:1") {
		t.Errorf("running %v after every release; seen %d takes", p.running, len(seen))
	}
}
