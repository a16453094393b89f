package kube

import (
	"fmt"
	"strings"

	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/verify"
)

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

func osv(p *platform.Platform) string {
	if p == nil {
		return ""
	}
	return p.OSVersion
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
