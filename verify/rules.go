package verify

import (
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/imgctl/imgctl/findings"
	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/snapshot"
)

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

func (c *checker) notAnIndex() {
	e := &c.s.Entries[0]
	p := entryPlatform(e)
	if p != nil && p.OS == "windows" && !c.o.HostProcess {
		c.add(RuleNotAnIndex, findings.Error, e, "a single-platform Windows manifest has no index descriptor to carry os.version, so nodes cannot choose by build; publish an index (imgctl index create)")
		return
	}
	c.add(RuleNotAnIndex, findings.Warning, e, "the reference is a single-platform manifest, not an index")
}

// entry applies the rules that look at one manifest and its config.
func (c *checker) entry(e *snapshot.Entry) {
	if e.IsAttestation() {
		return
	}
	if e.Descriptor.MediaType.IsIndex() {
		c.add(RuleNestedIndex, findings.Warning, e, "nested index: engines do not descend into it when they pick a variant")
		return
	}
	if e.Manifest == nil {
		return
	}
	desc, cfg := e.Descriptor.Platform, e.ConfigPlatform()
	if desc == nil && c.s.Index != nil {
		c.add(RuleNoDescriptorPlatform, findings.Warning, e, "the index entry has no platform: containerd sorts it last and judges it by its config, Docker never selects it")
	}
	c.platformMismatch(e, desc, cfg)
	c.osVersion(e, desc, cfg)
	if p := entryPlatform(e); p != nil && p.OS == "windows" {
		c.windowsConfig(e)
	}
	c.foreignLayers(e)
}

func (c *checker) platformMismatch(e *snapshot.Entry, desc, cfg *platform.Platform) {
	if desc == nil || cfg == nil {
		return
	}
	if !platform.SameOSArch(*desc, *cfg) {
		c.add(RulePlatformMismatch, findings.Error, e, "the index says %s but the image config says %s",
			platform.Format(platform.Platform{OS: desc.OS, Architecture: desc.Architecture, Variant: desc.Variant}),
			platform.Format(platform.Platform{OS: cfg.OS, Architecture: cfg.Architecture, Variant: cfg.Variant}))
	}
}

func (c *checker) osVersion(e *snapshot.Entry, desc, cfg *platform.Platform) {
	p := entryPlatform(e)
	if p == nil || p.OS != "windows" {
		return
	}
	cfgV := ""
	if cfg != nil {
		cfgV = cfg.OSVersion
	}
	if desc != nil && desc.OSVersion == "" && !c.o.HostProcess {
		msg := "the Windows index entry has no os.version, so containerd and Docker cannot tell which build it needs and may pull it on a node where it fails"
		if cfgV != "" {
			msg += fmt.Sprintf("; its config has %s (recreate the index with imgctl index create to copy it)", cfgV)
		} else {
			msg += "; if this is a HostProcess image, verify it as one (imgctl verify --hostprocess)"
		}
		c.add(RuleMissingOSVersion, findings.Error, e, "%s", msg)
	}
	for _, v := range []struct{ where, val string }{{"index entry", osv(desc)}, {"config", cfgV}} {
		if v.val == "" {
			continue
		}
		if _, err := platform.ParseVersion(v.val); err != nil {
			c.add(RuleMalformedOSVersion, findings.Error, e, "the %s os.version %q is not four dot-separated numbers: containerd never matches it", v.where, v.val)
		}
	}
	if d := osv(desc); d != "" && d != cfgV && cfg != nil {
		if cfgV == "" {
			c.add(RuleOSVersionMismatch, findings.Error, e, "the index entry says os.version %s but the image config has none", d)
		} else {
			c.add(RuleOSVersionMismatch, findings.Error, e, "the index entry says os.version %s but the image config says %s", d, cfgV)
		}
	}
}

func osv(p *platform.Platform) string {
	if p == nil {
		return ""
	}
	return p.OSVersion
}

func (c *checker) windowsConfig(e *snapshot.Entry) {
	if e.Config == nil {
		return
	}
	cc := e.Config.Config
	for _, f := range []struct {
		name string
		argv []string
	}{{"Entrypoint", cc.Entrypoint}, {"Cmd", cc.Cmd}} {
		if len(f.argv) >= 2 && (f.argv[0] == "/bin/sh" || f.argv[0] == "sh") && f.argv[1] == "-c" {
			c.add(RuleShellFormEntrypoint, findings.Error, e, "the Windows %s is %q: a shell-form instruction built on Linux runs /bin/sh, which Windows does not have; use valid exec-form JSON with doubled backslashes", f.name, strings.Join(f.argv, " "))
		}
	}
	if strings.EqualFold(cc.User, "ContainerAdministrator") {
		sev := findings.Warning
		if c.o.RunAsNonRoot {
			sev = findings.Error
		}
		c.add(RuleContainerAdministrator, sev, e, "the image runs as ContainerAdministrator: kubelet refuses to start it under runAsNonRoot; set USER ContainerUser")
	}
}

func (c *checker) foreignLayers(e *snapshot.Entry) {
	var n int
	var urls []string
	for _, l := range e.Manifest.Layers {
		if l.MediaType == types.DockerForeignLayer || len(l.URLs) > 0 || !l.MediaType.IsDistributable() {
			n++
			urls = append(urls, l.URLs...)
		}
	}
	if n > 0 {
		where := "their urls"
		if len(urls) > 0 {
			where = strings.Join(slices.Compact(urls), ", ")
		}
		c.add(RuleForeignLayers, findings.Warning, e, "%d foreign (non-distributable) layer(s): nodes fetch them from %s, which must be reachable from every node", n, where)
	}
}

func (c *checker) duplicates() {
	seen := map[string]*snapshot.Entry{}
	for _, e := range c.images() {
		p := entryPlatform(e)
		if p == nil {
			continue
		}
		k := platform.Key(*p)
		if first, ok := seen[k]; ok {
			c.add(RuleDuplicatePlatform, findings.Error, e, "same platform as %s (%s): engines pick only one of them", first.Descriptor.Digest, k)
			continue
		}
		seen[k] = e
	}
}

func (c *checker) attestations() {
	if c.s.Index == nil {
		return
	}
	present := map[string]bool{}
	for _, e := range c.s.Entries {
		present[e.Descriptor.Digest.String()] = true
	}
	for i := range c.s.Entries {
		e := &c.s.Entries[i]
		if !e.IsAttestation() {
			continue
		}
		ref := e.Descriptor.Annotations[snapshot.AnnotationReferenceDigest]
		if ref == "" || !present[ref] {
			c.add(RuleDanglingAttestation, findings.Warning, e, "attestation for %q, which is not in the index", ref)
		}
	}
}

func (c *checker) required() {
	for _, want := range c.o.RequirePlatforms {
		if !c.hasPlatform(want) {
			c.add(RuleMissingPlatform, findings.Error, nil, "the index has no %s variant", platform.Format(want))
			c.r.Findings[len(c.r.Findings)-1].Platform = platform.Format(want)
		}
	}
}

// hasPlatform reports whether an image of the index is of want's build:
// platform.SameBuild, so a want without os.version accepts any build.
func (c *checker) hasPlatform(want platform.Platform) bool {
	for _, e := range c.images() {
		if p := entryPlatform(e); p != nil && platform.SameBuild(want, *p) {
			return true
		}
	}
	return false
}
