package verify

import (
	"github.com/imgctl/imgctl/findings"
	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/snapshot"
	"strings"
)

// Options select what Evaluate checks.
type Options struct {
	// Targets are the Windows node builds to check. When empty and the
	// index has Windows variants, platform.DefaultTargets are used.
	Targets []platform.Target
	// RequirePlatforms must each be present in the index.
	RequirePlatforms []platform.Platform
	// NoDefaultTargets leaves out the default LTSC targets when Targets is
	// empty, for callers that check their own targets (verify --nodes).
	NoDefaultTargets bool
	// HostProcess accepts Windows variants without os.version and a
	// single-manifest Windows image.
	HostProcess bool
	// RunAsNonRoot makes a ContainerAdministrator user an error.
	RunAsNonRoot bool
	// Engines to simulate; empty means platform.Engines(): every
	// supported containerd release line and Docker.
	Engines []platform.Engine
	// Deciding names the engines whose choice decides whether a target
	// passes, for callers that name their fleet's engines; the others only
	// warn. Empty means every
	// engine of Engines when it is set, and every containerd release line
	// by default.
	Deciding []string
}

// Evaluate applies every rule to a snapshot. It does no I/O.
func Evaluate(ref string, s *snapshot.Snapshot, o Options) *Report {
	r := &Report{Ref: ref, Digest: s.Digest.String(), Findings: []findings.Finding{}, Targets: []TargetResult{}}
	c := &checker{s: s, o: o, r: r}
	if s.Index == nil {
		c.notAnIndex()
	}
	for i := range s.Entries {
		c.entry(&s.Entries[i])
	}
	c.duplicates()
	c.attestations()
	c.required()
	c.targets()
	r.Passed = len(r.Errors()) == 0
	return r
}

type checker struct {
	s *snapshot.Snapshot
	o Options
	r *Report
}

func (c *checker) add(rule string, sev findings.Severity, e *snapshot.Entry, format string, args ...any) {
	f := findings.Finding{Rule: rule, Severity: sev, Message: sprintf(format, args...)}
	if e != nil {
		f.Digest = e.Descriptor.Digest.String()
		f.Platform = platform.FormatPtr(entryPlatform(e))
	}
	c.r.Findings = append(c.r.Findings, f)
}

// The OS comes back in lower case: containerd normalises it and Docker
// compares it case-insensitively, so an entry that says "Windows" is a
// Windows entry to every engine and to every rule.
func entryPlatform(e *snapshot.Entry) *platform.Platform {
	p := e.Platform()
	if p == nil || p.OS == strings.ToLower(p.OS) {
		return p
	}
	q := *p
	q.OS = strings.ToLower(q.OS)
	return &q
}

// images returns the runnable entries: not attestations, not nested indexes.
func (c *checker) images() []*snapshot.Entry {
	var out []*snapshot.Entry
	for i := range c.s.Entries {
		e := &c.s.Entries[i]
		if e.Manifest != nil && !e.IsAttestation() {
			out = append(out, e)
		}
	}
	return out
}

func (c *checker) hasWindows() bool {
	for _, e := range c.images() {
		if p := entryPlatform(e); p != nil && p.OS == "windows" {
			return true
		}
	}
	return false
}
