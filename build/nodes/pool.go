package nodes

import (
	"slices"
	"strings"
	"sync"
)

// Pool spreads whole builds (bake's targets) over the daemons of a pool:
// nodes that name the same platform more than once (two nodes of
// linux/amd64, or a buildx instance with two nodes of one platform) are
// alternatives, and each build that starts gets, for every node
// platform, the alternative whose daemon is running the fewest builds; on
// a tie, the daemon it already took for another platform, else the first
// given. A build's variants thus stay on one daemon when the pool allows
// it, and the next build goes to the idlest one. buildx's own bake sends
// every target to the same node of a platform; a single build
// (AssignNodes) refuses a platform given twice. A Pool is safe for
// concurrent use.
type Pool struct {
	mu      sync.Mutex
	keys    []string          // node platforms, in the order given
	choices map[string][]Node // the alternatives of each platform
	running map[string]int    // builds running on each daemon address
}

// NewPool returns the pool of ns, or nil when no platform has more than
// one node: then every build gets ns as they are.
func NewPool(ns []Node) *Pool {
	p := &Pool{choices: map[string][]Node{}, running: map[string]int{}}
	several := false
	for _, n := range ns {
		k := FormatNodePlatform(n.Platform)
		if _, ok := p.choices[k]; !ok {
			p.keys = append(p.keys, k)
		}
		p.choices[k] = append(p.choices[k], n)
		several = several || len(p.choices[k]) > 1
	}
	if !several {
		return nil
	}
	return p
}

// Take picks one node of every platform for a build that starts and
// counts the build as running on each daemon it picked; Release undoes
// that when the build ends.
func (p *Pool) Take() []Node {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Node, 0, len(p.keys))
	taken := func(n Node) bool {
		return slices.ContainsFunc(out, func(m Node) bool { return m.Builder.Addr == n.Builder.Addr })
	}
	for _, k := range p.keys {
		best := p.choices[k][0]
		for _, n := range p.choices[k][1:] {
			load, bestLoad := p.running[n.Builder.Addr], p.running[best.Builder.Addr]
			if load < bestLoad || load == bestLoad && taken(n) && !taken(best) {
				best = n
			}
		}
		out = append(out, best)
	}
	for _, a := range addresses(out) {
		p.running[a]++
	}
	return out
}

// Release counts a build that took ns as ended.
func (p *Pool) Release(ns []Node) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, a := range addresses(ns) {
		p.running[a]--
	}
}

// addresses are the distinct daemon addresses of ns, in order.
func addresses(ns []Node) []string {
	var out []string
	for _, n := range ns {
		if !slices.Contains(out, n.Builder.Addr) {
			out = append(out, n.Builder.Addr)
		}
	}
	return out
}

// FormatNodes lists ns as PLATFORM=ADDR, comma-separated.
func FormatNodes(ns []Node) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = n.String()
	}
	return strings.Join(s, ", ")
}
