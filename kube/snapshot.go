package kube

import (
	"fmt"
	"strings"

	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/verify"
)

// targetRules are the verify rules derived from the targets, which the
// nodes replace when no target was given explicitly.
var targetRules = map[string]bool{
	verify.RuleNoVariantForTarget: true,
	verify.RuleEngineDisagreement: true,
	verify.RuleOrderingQuirk:      true,
	verify.RuleUnreachableVariant: true,
}

// Merge adds a node report to a verify report and recomputes Passed. With
// replaceTargets (no explicit --target) the rows of verify's default LTSC
// targets and the findings derived from them are dropped first, so that the
// nodes stand in for the defaults.
func Merge(rep *verify.Report, nr *NodeReport, replaceTargets bool) {
	if replaceTargets {
		rep.Targets = rep.Targets[:0]
		kept := rep.Findings[:0]
		for _, f := range rep.Findings {
			if !targetRules[f.Rule] {
				kept = append(kept, f)
			}
		}
		rep.Findings = append(kept, nr.Unreachable...)
	}
	rep.Findings = append(rep.Findings, nr.Findings...)
	rep.Targets = append(rep.Targets, nr.Targets...)
	rep.Passed = len(rep.Errors()) == 0
}

// candidates lists the snapshot's entries as engines see them, as verify
// does: the descriptor platform (the config's for a single manifest), and
// the config platform for entries judged by it.
func candidates(s *verify.Snapshot) []platform.Candidate {
	out := make([]platform.Candidate, len(s.Entries))
	for i := range s.Entries {
		e := &s.Entries[i]
		out[i] = platform.Candidate{Platform: e.Descriptor.Platform, Config: e.ConfigPlatform()}
		if s.Index == nil {
			out[i].Platform = e.ConfigPlatform()
		}
	}
	return out
}

// entryPlatform is the descriptor platform, or the config's.
func entryPlatform(e *verify.Entry) *platform.Platform {
	if e.Descriptor.Platform != nil {
		return e.Descriptor.Platform
	}
	return e.ConfigPlatform()
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
	if p := entryPlatform(e); p != nil {
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
		out = append(out, platform.FormatPtr(entryPlatform(e)))
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
