package bake

import (
	"slices"
	"strings"
	"sync"

	"github.com/imgctl/imgctl/build/nodes"
)

// pool spreads whole targets over the daemons of a pool: nodes that name
// the same platform more than once (--node linux/amd64=A --node
// linux/amd64=B, or a buildx instance with two nodes of one platform) are
// alternatives, and each target that starts gets, for every node
// platform, the alternative that is running the fewest targets (the first
// on a tie). A target's variants thus stay on one daemon when the pool
// allows it, and the next target goes to the idlest one. buildx's own
// bake sends every target to the same node of a platform; a single build
// (build.Build) refuses a platform given twice.
type pool struct {
	mu      sync.Mutex
	keys    []string                // node platforms, in the order given
	choices map[string][]nodes.Node // the alternatives of each platform
	running map[string]int          // targets running on each daemon address
}

// newPool returns the pool of ns, or nil when no platform has more than
// one node: then every target gets ns as they are.
func newPool(ns []nodes.Node) *pool {
	p := &pool{choices: map[string][]nodes.Node{}, running: map[string]int{}}
	several := false
	for _, n := range ns {
		k := nodes.FormatNodePlatform(n.Platform)
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

// take picks one node of every platform for a target that starts and
// counts the target as running on each daemon it picked.
func (p *pool) take() []nodes.Node {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]nodes.Node, 0, len(p.keys))
	for _, k := range p.keys {
		best := p.choices[k][0]
		for _, n := range p.choices[k][1:] {
			if p.running[n.Builder.Addr] < p.running[best.Builder.Addr] {
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

// release counts a target that took ns as ended.
func (p *pool) release(ns []nodes.Node) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, a := range addresses(ns) {
		p.running[a]--
	}
}

// addresses are the distinct daemon addresses of ns, in order.
func addresses(ns []nodes.Node) []string {
	var out []string
	for _, n := range ns {
		if !slices.Contains(out, n.Builder.Addr) {
			out = append(out, n.Builder.Addr)
		}
	}
	return out
}

// describe names the nodes a target took, for its note.
func describe(ns []nodes.Node) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = n.String()
	}
	return strings.Join(s, ", ")
}
