package verify

import (
	"fmt"
	"strings"

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
	targets := c.targetList()
	if len(targets) == 0 {
		return
	}
	engines := c.engines()
	hosts := make([]Host, len(targets))
	names := make([]string, len(targets))
	for i, t := range targets {
		hosts[i], names[i] = TargetHost(t, engines), t.Name
	}
	ev := EvaluateHosts(c.s, hosts)
	for _, r := range ev.Hosts {
		c.target(r)
	}
	for _, i := range ev.Unselected() {
		c.add(RuleUnreachableVariant, Warning, &c.s.Entries[i], "%s selects this variant on none of the targets (%s)", engines[0].Name(), strings.Join(names, ", "))
	}
}

// target reports what the engines select on one target.
func (c *checker) target(r HostResult) {
	first := r.Deciding()
	for _, sel := range r.Selections {
		c.r.Targets = append(c.r.Targets, sel.Row)
	}
	c.decide(r.Host, first)
	for _, sel := range r.Selections[1:] {
		if sel.Index != first.Index {
			c.disagree(r.Host, first, sel)
		}
		c.quirk(r.Host, sel)
	}
	c.quirk(r.Host, first)
}

func (c *checker) describe(sel int) string {
	if sel < 0 {
		return "nothing"
	}
	e := &c.s.Entries[sel]
	return fmt.Sprintf("%s (%s)", e.Descriptor.Digest, platform.FormatPtr(entryPlatform(e)))
}

// decide reports a target whose deciding engine runs no variant, or one
// that does not start there.
func (c *checker) decide(h Host, sel Selection) {
	if sel.Index < 0 {
		c.add(RuleNoVariantForTarget, Error, nil, "%s on %s (build %d) runs no variant of this index: nodes fail with \"no match for platform in manifest\"", sel.Engine.Name(), h.Name, h.Build())
		c.r.Findings[len(c.r.Findings)-1].Platform = platform.Format(h.Platform)
		return
	}
	if !sel.Runs {
		c.add(RuleNoVariantForTarget, Error, &c.s.Entries[sel.Index], "%s on %s (build %d) picks a variant that does not start there: \"The operating system of the container does not match the operating system of the host\"", sel.Engine.Name(), h.Name, h.Build())
	}
}

func (c *checker) disagree(h Host, first, sel Selection) {
	msg := fmt.Sprintf("on %s nodes %s picks %s, but %s picks %s", h.Name, first.Engine.Name(), c.describe(first.Index), sel.Engine.Name(), c.describe(sel.Index))
	if sel.Index >= 0 && !sel.Runs {
		msg += fmt.Sprintf("; under %s the container would fail to start", sel.Engine.Name())
	}
	var at *snapshot.Entry
	if sel.Index >= 0 {
		at = &c.s.Entries[sel.Index]
	}
	c.add(RuleEngineDisagreement, Warning, at, "%s", msg)
}

// quirk warns when containerd's string ordering of os.version picks a
// variant while a numerically newer compatible one exists, e.g.
// 10.0.26100.9999 over 10.0.26100.33674.
func (c *checker) quirk(h Host, sel Selection) {
	if q := sel.Quirk; q != nil {
		c.add(RuleOrderingQuirk, Warning, &c.s.Entries[sel.Index], "on %s nodes %s compares os.version as strings and picks %s over the newer %s; rebuild so that the newest variant also sorts first", h.Name, sel.Engine.Name(), q.Selected, q.Newer)
	}
}
