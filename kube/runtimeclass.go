package kube

import (
	"strings"

	"github.com/imgctl/imgctl/findings"
	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/verify"
)

// runtimeClassVariant reports a RuntimeClass whose windows-build node
// selector has no variant in the --image-index that containerd 2.x runs on
// such a node.
func (c *wchecker) runtimeClassVariant(rc runtimeClass) {
	wb := rc.windowsBuild()
	if c.o.Image == nil || !wb.ok() {
		return
	}
	build := strings.TrimSpace(str(wb.Value))
	v, err := platform.ParseHostVersion(build)
	if err != nil {
		c.add(RuleRuntimeClassNoVariant, findings.Error, rc.obj, "", wb.Line(),
			"%s %q is not a Windows build such as 10.0.26100: no node carries it, so the RuntimeClass schedules nowhere", LabelWindowsBuild, build)
		return
	}
	arch := first(str(rc.nodeSelector[LabelArch].Value), "amd64")
	host := platform.Platform{OS: "windows", Architecture: arch, OSVersion: v.String()}
	ev := verify.EvaluateHosts(c.o.Image, []verify.Host{{Name: rc.obj.Name, Platform: host, Engines: []platform.Engine{platform.ContainerdEngine()}}})
	if ev.Hosts[0].Deciding().Runs {
		return
	}
	var have []string
	for i := range c.o.Image.Entries {
		en := &c.o.Image.Entries[i]
		if p := en.Platform(); p != nil && p.OS == "windows" && en.Manifest != nil && !en.IsAttestation() {
			have = append(have, platform.Format(*p))
		}
	}
	if len(have) == 0 {
		have = []string{"none"}
	}
	c.add(RuleRuntimeClassNoVariant, findings.Error, rc.obj, "", wb.Line(),
		"RuntimeClass %s selects %s nodes, but containerd there runs no variant of the image index (Windows variants: %s): its pods fail with \"no match for platform in manifest\"",
		rc.obj.Name, platform.Format(host), strings.Join(have, ", "))
}
