package kube

import (
	"fmt"

	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/snapshot"
	"github.com/imgctl/imgctl/verify"
)

// NodeReport is what CheckNodes found.
type NodeReport struct {
	// Findings name the node in their message. Digest and Platform are
	// those of the variant the node's engine selects, or the node's own
	// platform when it selects none.
	Findings []verify.Finding
	// Targets has one row per node and engine: Target is the node name.
	Targets []verify.TargetResult
	// Unreachable are unreachable-variant warnings for the Windows
	// variants no node selects. Merge adds them only when the nodes
	// replace the default targets.
	Unreachable []verify.Finding
}

// CheckNodes simulates, on every node, the engine the node runs (every
// profile when its runtime is unknown), and reports the nodes whose engine
// selects no variant that starts there. Linux nodes need a variant of their
// os/arch under containerd's Linux selection. It does no I/O.
func CheckNodes(s *snapshot.Snapshot, nodes []Node) *NodeReport {
	c := &nodeChecker{s: s, cands: verify.Candidates(s), reached: map[int]bool{}, r: &NodeReport{}}
	for _, n := range nodes {
		c.node(n)
	}
	c.unreachable()
	return c.r
}

type nodeChecker struct {
	s       *snapshot.Snapshot
	cands   []platform.Candidate
	reached map[int]bool
	windows []string
	r       *NodeReport
}

func (c *nodeChecker) node(n Node) {
	host, ok := n.Host()
	if !ok {
		c.add(RuleNodeUnknownPlatform, verify.Warning, "", -1, "node %s: cannot read its OS, architecture and Windows build from status.nodeInfo or its labels; not checked", n.Name)
		return
	}
	if n.IsWindows() {
		c.windows = append(c.windows, n.Name)
	}
	engines, why := nodeEngines(n)
	if why != "" {
		c.add(RuleNodeUnknownRuntime, verify.Warning, platform.Format(host), -1, "node %s: %s; checked with every engine profile", n.Name, why)
	}
	ref := platform.ContainerdEngine{}.Select(host, c.cands)
	for _, e := range engines {
		sel := e.Select(host, c.cands)
		c.r.Targets = append(c.r.Targets, c.row(n, e, sel))
		if sel < 0 || !c.runs(host, sel) {
			c.noVariant(n, host, e, sel)
			continue
		}
		c.reached[sel] = true
		if e.Name() != platform.Containerd && sel != ref {
			c.add(RuleNodeEngineQuirk, verify.Warning, platform.Format(host), sel,
				"node %s (%s) runs %s, which picks %s where containerd 2.x picks %s; the node keeps the older choice until its containerd is upgraded",
				n.Name, describeHost(host), e.Name(), c.describe(sel), c.describe(ref))
		}
		if e.Name() == platform.Containerd {
			c.orderingQuirk(n, host, e, sel)
		}
	}
}

func (c *nodeChecker) row(n Node, e platform.Engine, sel int) verify.TargetResult {
	tr := verify.TargetResult{Target: n.Name, Build: n.Version.Build, Engine: e.Name()}
	if sel >= 0 {
		tr.Selected = c.s.Entries[sel].Descriptor.Digest.String()
		if p := c.s.Entries[sel].Platform(); p != nil {
			tr.OSVersion = p.OSVersion
		}
	}
	return tr
}

// runs reports whether the selected entry starts on host: containerd 2.x
// encodes the host's own rules.
func (c *nodeChecker) runs(host platform.Platform, sel int) bool {
	p := c.s.Entries[sel].Platform()
	return p != nil && (platform.ContainerdEngine{}).Match(host, *p)
}

func (c *nodeChecker) noVariant(n Node, host platform.Platform, e platform.Engine, sel int) {
	if sel < 0 {
		c.add(RuleNodeNoVariant, verify.Error, platform.Format(host), -1,
			"node %s (%s, %s) runs no variant of this index, which has %s: its pods fail with \"no match for platform in manifest\"",
			n.Name, describeHost(host), e.Name(), c.available())
		return
	}
	c.add(RuleNodeNoVariant, verify.Error, platform.Format(host), sel,
		"node %s (%s, %s) picks %s, which does not start there: \"The operating system of the container does not match the operating system of the host\"",
		n.Name, describeHost(host), e.Name(), c.describe(sel))
}

// orderingQuirk warns when containerd's string ordering of os.version picks
// a variant while a numerically newer compatible one exists.
func (c *nodeChecker) orderingQuirk(n Node, host platform.Platform, e platform.Engine, sel int) {
	sv, err := platform.ParseVersion(osv(c.s.Entries[sel].Platform()))
	if err != nil {
		return
	}
	for _, i := range platform.Compatible(e, host, c.cands) {
		v, err := platform.ParseVersion(osv(c.s.Entries[i].Platform()))
		if err == nil && v.Compare(sv) > 0 {
			c.add(verify.RuleOrderingQuirk, verify.Warning, platform.Format(host), sel,
				"node %s: %s compares os.version as strings and picks %s over the newer %s", n.Name, e.Name(), sv, v)
			return
		}
	}
}

func (c *nodeChecker) unreachable() {
	for i := range c.s.Entries {
		e := &c.s.Entries[i]
		p := e.Platform()
		if e.Manifest == nil || e.IsAttestation() || p == nil || p.OS != "windows" || c.reached[i] {
			continue
		}
		who := "the inventory has no Windows node"
		if len(c.windows) > 0 {
			who = fmt.Sprintf("no Windows node selects it (%d checked)", len(c.windows))
		}
		c.r.Unreachable = append(c.r.Unreachable, verify.Finding{
			Rule: verify.RuleUnreachableVariant, Severity: verify.Warning,
			Digest: e.Descriptor.Digest.String(), Platform: platform.Format(*p),
			Message: "this variant serves none of the nodes: " + who,
		})
	}
}

func (c *nodeChecker) add(rule string, sev verify.Severity, plat string, sel int, format string, args ...any) {
	f := verify.Finding{Rule: rule, Severity: sev, Platform: plat, Message: fmt.Sprintf(format, args...)}
	if sel >= 0 {
		e := &c.s.Entries[sel]
		f.Digest, f.Platform = e.Descriptor.Digest.String(), platform.FormatPtr(e.Platform())
	}
	c.r.Findings = append(c.r.Findings, f)
}
