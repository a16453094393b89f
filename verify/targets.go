package verify

import (
	"fmt"

	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/snapshot"
)

func (c *checker) engines() []platform.Engine {
	if len(c.o.Engines) > 0 {
		return c.o.Engines
	}
	return platform.Engines()
}

func (c *checker) targetList() []platform.Target {
	if len(c.o.Targets) > 0 {
		return c.o.Targets
	}
	if c.o.NoDefaultTargets || !c.hasWindows() {
		return nil
	}
	ts, _ := platform.ParseTargets(platform.DefaultTargets)
	return ts
}

// targets simulates every engine on every target node. The first engine
// decides whether a target passes; the others warn where they differ.
func (c *checker) targets() {
	cands := Candidates(c.s)
	engines := c.engines()
	primary := engines[0]
	reached := map[int]bool{}
	for _, t := range c.targetList() {
		host := t.Host()
		first := -1
		for n, e := range engines {
			sel := e.Select(host, cands)
			c.r.Targets = append(c.r.Targets, c.result(t, e, sel))
			if n == 0 {
				first = sel
				c.primary(t, e, sel, reached)
				continue
			}
			if sel != first {
				c.disagree(t, primary, first, e, sel)
			}
			if e.Name() == platform.Containerd {
				c.quirk(t, e, host, cands, sel)
			}
		}
		if primary.Name() == platform.Containerd {
			c.quirk(t, primary, host, cands, first)
		}
	}
	if len(c.targetList()) == 0 {
		return
	}
	names := c.targetNames() // once: it walks every entry
	for i := range c.s.Entries {
		e := &c.s.Entries[i]
		p := entryPlatform(e)
		if e.Manifest == nil || e.IsAttestation() || p == nil || p.OS != "windows" || reached[i] {
			continue
		}
		c.add(RuleUnreachableVariant, Warning, e, "%s selects this variant on none of the targets (%s)", primary.Name(), names)
	}
}

func (c *checker) targetNames() string {
	s := ""
	for i, t := range c.targetList() {
		if i > 0 {
			s += ", "
		}
		s += t.Name
	}
	return s
}

func (c *checker) result(t platform.Target, e platform.Engine, sel int) TargetResult {
	tr := TargetResult{Target: t.Name, Build: t.Version.Build, Engine: e.Name()}
	if sel >= 0 {
		en := &c.s.Entries[sel]
		tr.Selected = en.Descriptor.Digest.String()
		if p := entryPlatform(en); p != nil {
			tr.OSVersion = p.OSVersion
		}
	}
	return tr
}

// runs reports whether the selected entry really starts on the target: the
// Windows rules containerd 2.x encodes are the host's own.
func (c *checker) runs(t platform.Target, sel int) bool {
	p := entryPlatform(&c.s.Entries[sel])
	return p != nil && (platform.ContainerdEngine{}).Match(t.Host(), *p)
}

func (c *checker) describe(sel int) string {
	if sel < 0 {
		return "nothing"
	}
	e := &c.s.Entries[sel]
	return fmt.Sprintf("%s (%s)", e.Descriptor.Digest, platform.FormatPtr(entryPlatform(e)))
}

func (c *checker) primary(t platform.Target, e platform.Engine, sel int, reached map[int]bool) {
	if sel < 0 {
		c.add(RuleNoVariantForTarget, Error, nil, "%s on %s (build %d) runs no variant of this index: nodes fail with \"no match for platform in manifest\"", e.Name(), t.Name, t.Version.Build)
		c.r.Findings[len(c.r.Findings)-1].Platform = platform.Format(t.Host())
		return
	}
	reached[sel] = true
	if !c.runs(t, sel) {
		c.add(RuleNoVariantForTarget, Error, &c.s.Entries[sel], "%s on %s (build %d) picks a variant that does not start there: \"The operating system of the container does not match the operating system of the host\"", e.Name(), t.Name, t.Version.Build)
	}
}

func (c *checker) disagree(t platform.Target, p platform.Engine, psel int, e platform.Engine, sel int) {
	msg := fmt.Sprintf("on %s nodes %s picks %s, but %s picks %s", t.Name, p.Name(), c.describe(psel), e.Name(), c.describe(sel))
	if sel >= 0 && !c.runs(t, sel) {
		msg += fmt.Sprintf("; under %s the container would fail to start", e.Name())
	}
	var at *snapshot.Entry
	if sel >= 0 {
		at = &c.s.Entries[sel]
	}
	c.add(RuleEngineDisagreement, Warning, at, "%s", msg)
}

// quirk warns when containerd's string ordering of os.version picks a
// variant while a numerically newer compatible one exists, e.g.
// 10.0.26100.9999 over 10.0.26100.33674.
func (c *checker) quirk(t platform.Target, e platform.Engine, host platform.Platform, cands []platform.Candidate, sel int) {
	if sel < 0 {
		return
	}
	sv, err := platform.ParseVersion(osv(entryPlatform(&c.s.Entries[sel])))
	if err != nil {
		return
	}
	for _, i := range platform.Compatible(e, host, cands) {
		v, err := platform.ParseVersion(osv(entryPlatform(&c.s.Entries[i])))
		if err == nil && v.Compare(sv) > 0 {
			c.add(RuleOrderingQuirk, Warning, &c.s.Entries[sel], "on %s nodes %s compares os.version as strings and picks %s over the newer %s; rebuild so that the newest variant also sorts first", t.Name, e.Name(), sv, v)
			return
		}
	}
}
