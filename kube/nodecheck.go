package kube

import (
	"fmt"
	"strings"

	"github.com/imgctl/imgctl/findings"
	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/snapshot"
	"github.com/imgctl/imgctl/verify"
)

// NodeReport is what CheckNodes found.
type NodeReport struct {
	// Findings name the node in their message. Digest and Platform are
	// those of the variant the node's engine selects, or the node's own
	// platform when it selects none.
	Findings []findings.Finding
	// Targets has one row per node and engine: Target is the node name.
	Targets []verify.TargetResult
	// Unreachable are unreachable-variant warnings for the Windows
	// variants no node selects. Merge adds them only when the nodes
	// replace the default targets.
	Unreachable []findings.Finding
}

// CheckNodes simulates, on every node, the engine the node runs (every
// profile when its runtime is unknown), and reports the nodes whose engine
// selects no variant that starts there. Linux nodes need a variant of their
// os/arch under containerd's Linux selection. It does no I/O: verify
// evaluates the nodes as hosts (verify.EvaluateHosts) and CheckNodes words
// what it returns for nodes.
func CheckNodes(s *snapshot.Snapshot, nodes []Node) *NodeReport {
	var hosts []verify.Host
	whys := make([]string, len(nodes))
	counts := make([]int, len(nodes))
	for i, n := range nodes {
		var hs []verify.Host
		hs, whys[i] = nodeHosts(n)
		hosts, counts[i] = append(hosts, hs...), len(hs)
	}
	ev := verify.EvaluateHosts(s, hosts)
	c := &nodeChecker{s: s, r: &NodeReport{}}
	results := ev.Hosts
	for i, n := range nodes {
		c.node(n, whys[i], results[:counts[i]])
		results = results[counts[i]:]
	}
	c.unreachable(ev.Unserved())
	return c.r
}

// nodeHosts maps a node to the hosts verify evaluates, one per engine the
// node may run: its own, or every profile when its runtime is unknown (why
// says why). Each host's engine decides, and containerd 2.x follows it as
// the reference a node-engine-quirk compares with. A node whose platform
// cannot be read has no host.
func nodeHosts(n Node) ([]verify.Host, string) {
	host, ok := n.Host()
	if !ok {
		return nil, ""
	}
	engines, why := nodeEngines(n)
	hosts := make([]verify.Host, len(engines))
	for i, e := range engines {
		hosts[i] = verify.Host{Name: n.Name, Platform: host, Engines: []platform.Engine{e}}
		if e.Name() != platform.Containerd {
			hosts[i].Engines = append(hosts[i].Engines, platform.ContainerdEngine())
		}
	}
	return hosts, why
}

type nodeChecker struct {
	s       *snapshot.Snapshot
	windows int // Windows nodes checked
	r       *NodeReport
}

// node reports on one node from the results of its hosts.
func (c *nodeChecker) node(n Node, why string, results []verify.HostResult) {
	host, ok := n.Host()
	if !ok {
		c.add(RuleNodeUnknownPlatform, findings.Warning, "", -1, "node %s: cannot read its OS, architecture and Windows build from status.nodeInfo or its labels; not checked", n.Name)
		return
	}
	if n.IsWindows() {
		c.windows++
	}
	if why != "" {
		c.add(RuleNodeUnknownRuntime, findings.Warning, platform.Format(host), -1, "node %s: %s", n.Name, why)
	}
	for _, r := range results {
		c.engine(n, r)
	}
}

// engine reports on one engine of a node: no variant that starts, a choice
// other than containerd 2.x's, containerd's ordering quirk.
func (c *nodeChecker) engine(n Node, r verify.HostResult) {
	host, sel := r.Host.Platform, r.Deciding()
	c.r.Targets = append(c.r.Targets, sel.Row)
	if !sel.Runs {
		c.noVariant(n, host, sel)
		return
	}
	if sel.Engine.Name() != platform.Containerd {
		if ref := r.Selections[1].Index; sel.Index != ref {
			c.add(RuleNodeEngineQuirk, findings.Warning, platform.Format(host), sel.Index,
				"node %s (%s) runs %s (profile %s), which picks %s where %s picks %s; the node keeps this choice until its runtime is upgraded",
				n.Name, describeHost(host), n.Runtime, sel.Engine.Name(), c.describe(sel.Index), platform.PrimaryRanges(platform.Containerd), c.describe(ref))
		}
	}
	if q := sel.Quirk; q != nil && platform.RanksByString(sel.Engine) {
		c.add(verify.RuleOrderingQuirk, findings.Warning, platform.Format(host), sel.Index,
			"node %s: %s compares os.version as strings and picks %s over the newer %s", n.Name, sel.Engine.Name(), q.Selected, q.Newer)
	}
}

func (c *nodeChecker) noVariant(n Node, host platform.Platform, sel verify.Selection) {
	if sel.Index < 0 {
		c.add(RuleNodeNoVariant, findings.Error, platform.Format(host), -1,
			"node %s (%s, %s) runs no variant of this index, which has %s: its pods fail with \"no match for platform in manifest\"",
			n.Name, describeHost(host), sel.Engine.Name(), c.available())
		return
	}
	c.add(RuleNodeNoVariant, findings.Error, platform.Format(host), sel.Index,
		"node %s (%s, %s) picks %s, which does not start there: \"The operating system of the container does not match the operating system of the host\"",
		n.Name, describeHost(host), sel.Engine.Name(), c.describe(sel.Index))
}

// unreachable words the variants no node serves.
func (c *nodeChecker) unreachable(unserved []int) {
	who := "the inventory has no Windows node"
	if c.windows > 0 {
		who = fmt.Sprintf("no Windows node selects it (%d checked)", c.windows)
	}
	for _, i := range unserved {
		e := &c.s.Entries[i]
		c.r.Unreachable = append(c.r.Unreachable, findings.Finding{
			Rule: verify.RuleUnreachableVariant, Severity: findings.Warning,
			Digest: e.Descriptor.Digest.String(), Platform: platform.FormatPtr(e.Platform()),
			Message: "this variant serves none of the nodes: " + who,
		})
	}
}

func (c *nodeChecker) add(rule string, sev findings.Severity, plat string, sel int, format string, args ...any) {
	f := findings.Finding{Rule: rule, Severity: sev, Platform: plat, Message: fmt.Sprintf(format, args...)}
	if sel >= 0 {
		e := &c.s.Entries[sel]
		f.Digest, f.Platform = e.Descriptor.Digest.String(), platform.FormatPtr(e.Platform())
	}
	c.r.Findings = append(c.r.Findings, f)
}

func (c *nodeChecker) describe(sel int) string {
	if sel < 0 {
		return "nothing"
	}
	e := &c.s.Entries[sel]
	if p := e.Platform(); p != nil {
		return platform.Format(*p)
	}
	return e.Descriptor.Digest.String()
}

// available lists the platforms of the index's images.
func (c *nodeChecker) available() string {
	var out []string
	for i := range c.s.Entries {
		e := &c.s.Entries[i]
		if e.Manifest == nil || e.IsAttestation() {
			continue
		}
		out = append(out, platform.FormatPtr(e.Platform()))
	}
	if len(out) == 0 {
		return "no images"
	}
	return strings.Join(out, ", ")
}

func describeHost(p platform.Platform) string {
	if p.OS != "windows" {
		return platform.Format(p)
	}
	v, err := platform.ParseHostVersion(p.OSVersion)
	if err != nil {
		return platform.Format(p)
	}
	s := fmt.Sprintf("%s/%s build %d", p.OS, p.Architecture, v.Build)
	if r, ok := platform.ReleaseForBuild(v.Build); ok {
		s += " " + r.Name
	}
	return s
}

// Merge adds a node report to a verify report and recomputes Passed. With
// replaceTargets (no explicit --target, so verify ran with
// NoDefaultTargets) the nodes stand in for the default LTSC targets, and the
// variants no node selects are reported as unreachable.
func Merge(rep *verify.Report, nr *NodeReport, replaceTargets bool) {
	if replaceTargets {
		rep.Findings = append(rep.Findings, nr.Unreachable...)
	}
	rep.Findings = append(rep.Findings, nr.Findings...)
	rep.Targets = append(rep.Targets, nr.Targets...)
	rep.Passed = len(rep.Errors()) == 0
}
