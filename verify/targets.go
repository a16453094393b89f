package verify

import (
	"fmt"
	"slices"
	"strings"

	"github.com/imgctl/imgctl/findings"
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
		c.add(RuleUnreachableVariant, findings.Warning, &c.s.Entries[i], "no engine simulated runs this variant on any of the targets where it starts (%s)", strings.Join(names, ", "))
	}
}

// decides reports whether an engine's choice decides whether a target
// passes: the engines Options.Deciding names; without them, every engine
// given in Options.Engines; by default every containerd release line.
func (c *checker) decides(e platform.Engine) bool {
	switch {
	case len(c.o.Deciding) > 0:
		return slices.Contains(c.o.Deciding, e.Name())
	case len(c.o.Engines) > 0:
		return true
	}
	return platform.RanksByString(e) || platform.RanksByIndexOrder(e)
}

// target reports what the engines select on one target: an error for
// each deciding engine that runs nothing or a variant that cannot start,
// one engine-disagreement warning naming the release ranges of each
// choice, and the ordering warnings.
func (c *checker) target(r HostResult) {
	var failed []Selection
	for _, sel := range r.Selections {
		c.r.Targets = append(c.r.Targets, sel.Row)
		if c.decides(sel.Engine) && (sel.Index < 0 || !sel.Runs) {
			failed = append(failed, sel)
		}
	}
	c.decide(r.Host, failed)
	c.disagree(r.Host, r.Selections)
	c.quirks(r.Host, r.Selections)
}

// groups returns the selections' distinct choices in order of first
// appearance, each with the names of the engines that made it.
func groups(sels []Selection) (order []int, names map[int][]string) {
	names = map[int][]string{}
	for _, s := range sels {
		if _, ok := names[s.Index]; !ok {
			order = append(order, s.Index)
		}
		names[s.Index] = append(names[s.Index], s.Engine.Name())
	}
	return order, names
}

// describeEngines names engines by the releases that run them.
func describeEngines(names []string) string {
	if r := platform.RangesOf(names...); r != "" {
		return r
	}
	return strings.Join(names, ", ")
}

func (c *checker) describe(sel int) string {
	if sel < 0 {
		return "nothing"
	}
	e := &c.s.Entries[sel]
	return fmt.Sprintf("%s (%s)", e.Descriptor.Digest, platform.FormatPtr(entryPlatform(e)))
}

// decide reports, once per choice, the deciding engines of a target that
// run no variant, or one that does not start there, named by their
// releases.
func (c *checker) decide(h Host, failed []Selection) {
	order, names := groups(failed)
	for _, i := range order {
		who := describeEngines(names[i])
		if i < 0 {
			c.add(RuleNoVariantForTarget, findings.Error, nil, "%s on %s (build %d) run no variant of this index: nodes fail with \"no match for platform in manifest\"", who, h.Name, h.Build())
			c.r.Findings[len(c.r.Findings)-1].Platform = platform.Format(h.Platform)
			continue
		}
		c.add(RuleNoVariantForTarget, findings.Error, &c.s.Entries[i], "%s on %s (build %d) pick a variant that does not start there: \"The operating system of the container does not match the operating system of the host\"", who, h.Name, h.Build())
	}
}

// disagree warns, once per target, when the engines run different
// variants: "containerd 1.7.19–2.1.5 run X; containerd 2.1.6–2.x run Y".
func (c *checker) disagree(h Host, sels []Selection) {
	order, names := groups(sels)
	if len(order) < 2 {
		return
	}
	var parts []string
	var at *snapshot.Entry
	for _, i := range order {
		part := fmt.Sprintf("%s run %s", describeEngines(names[i]), c.describe(i))
		for _, s := range sels {
			if s.Index == i && i >= 0 && !s.Runs {
				part += ", which does not start there"
				break
			}
		}
		parts = append(parts, part)
		if at == nil && i >= 0 && i != order[0] {
			at = &c.s.Entries[i]
		}
	}
	c.add(RuleEngineDisagreement, findings.Warning, at, "on %s nodes (build %d) engines run different variants: %s", h.Name, h.Build(), strings.Join(parts, "; "))
}

// quirks warns when an engine's ordering runs an older build than the
// newest compatible one: containerd's string ordering of os.version
// (10.0.26100.9999 over 10.0.26100.33674; ordering-quirk), or index order,
// where the first compatible entry wins (order-picks-older). Engines with
// the same ordering and choice share one finding.
func (c *checker) quirks(h Host, sels []Selection) {
	type key struct {
		rule string
		sel  int
	}
	var order []key
	names := map[key][]string{}
	quirk := map[key]*OrderingQuirk{}
	for _, s := range sels {
		if s.Quirk == nil {
			continue
		}
		k := key{RuleOrderingQuirk, s.Index}
		if platform.RanksByIndexOrder(s.Engine) {
			k.rule = RuleOrderPicksOlder
		}
		if _, ok := names[k]; !ok {
			order = append(order, k)
		}
		names[k] = append(names[k], s.Engine.Name())
		quirk[k] = s.Quirk
	}
	for _, k := range order {
		q, who := quirk[k], describeEngines(names[k])
		if k.rule == RuleOrderPicksOlder {
			sev := findings.Warning
			if slices.ContainsFunc(names[k], func(n string) bool { return slices.Contains(c.o.Deciding, n) }) {
				sev = findings.Error
			}
			c.add(k.rule, sev, &c.s.Entries[k.sel], "on %s nodes %s take the first compatible entry in index order and run %s although %s is newer; list Windows entries newest first (imgctl index create and rebase do)", h.Name, who, q.Selected, q.Newer)
			continue
		}
		c.add(k.rule, findings.Warning, &c.s.Entries[k.sel], "on %s nodes %s compare os.version as strings and run %s over the newer %s; rebuild so that the newest variant also sorts first", h.Name, who, q.Selected, q.Newer)
	}
}
