package nodes

import (
	"slices"
	"sync"
	"testing"
)

func poolNodes(t *testing.T, specs ...string) []Node {
	t.Helper()
	var out []Node
	for i := 0; i < len(specs); i += 2 {
		p, err := ParseNodePlatform(specs[i])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, Node{Platform: p, Builder: Builder{Addr: specs[i+1]}})
	}
	return out
}

// TestPoolSpreadsTargets: nodes that name a platform once are no pool; a
// pool gives each starting build one node per platform, the one running
// the fewest builds (on a tie the daemon it already took, else the
// first), so a build stays on one daemon when it can and the next goes to
// the idlest, whatever order the platforms' nodes were given in.
func TestPoolSpreadsTargets(t *testing.T) {
	if p := NewPool(poolNodes(t, "linux", "tcp://a:1", "windows", "tcp://b:1")); p != nil {
		t.Errorf("one node per platform made a pool: %+v", p)
	}
	p := NewPool(poolNodes(t, "linux", "tcp://a:1", "windows", "tcp://a:1", "linux", "tcp://b:1", "windows", "tcp://b:1", "linux/arm64", "tcp://c:1"))
	if p == nil {
		t.Fatal("no pool")
	}
	got := func(ns []Node) string { return FormatNodes(ns) }
	first := p.Take()
	if g := got(first); g != "linux=tcp://a:1, windows=tcp://a:1, linux/arm64=tcp://c:1" {
		t.Errorf("first target: %s", g)
	}
	second := p.Take()
	if g := got(second); g != "linux=tcp://b:1, windows=tcp://b:1, linux/arm64=tcp://c:1" {
		t.Errorf("second target: %s", g)
	}
	p.Release(first)
	if g := got(p.Take()); g != "linux=tcp://a:1, windows=tcp://a:1, linux/arm64=tcp://c:1" {
		t.Errorf("after the first ended: %s", g)
	}
	if p.running["tcp://c:1"] != 2 || p.running["tcp://a:1"] != 1 || p.running["tcp://b:1"] != 1 {
		t.Errorf("running %v", p.running)
	}
	// The windows nodes given in the other order: a build still takes one
	// daemon for both platforms.
	p = NewPool(poolNodes(t, "linux", "tcp://a:1", "windows", "tcp://b:1", "linux", "tcp://b:1", "windows", "tcp://a:1"))
	if g := got(p.Take()); g != "linux=tcp://a:1, windows=tcp://a:1" {
		t.Errorf("first build, windows nodes in the other order: %s", g)
	}
	if g := got(p.Take()); g != "linux=tcp://b:1, windows=tcp://b:1" {
		t.Errorf("second build, windows nodes in the other order: %s", g)
	}
}

// TestPoolConcurrent: targets taking and releasing at once (under -race)
// leave every count at zero.
func TestPoolConcurrent(t *testing.T) {
	p := NewPool(poolNodes(t, "linux", "tcp://a:1", "linux", "tcp://b:1"))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var seen []string
	for range 2 {
		wg.Go(func() {
			for range 100 {
				ns := p.Take()
				mu.Lock()
				seen = append(seen, ns[0].Builder.Addr)
				mu.Unlock()
				p.Release(ns)
			}
		})
	}
	wg.Wait()
	if p.running["tcp://a:1"] != 0 || p.running["tcp://b:1"] != 0 || len(seen) != 200 || !slices.Contains(seen, "tcp://a:1") {
		t.Errorf("running %v after every release; seen %d takes", p.running, len(seen))
	}
}
