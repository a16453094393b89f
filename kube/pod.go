package kube

import (
	"fmt"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/imgctl/imgctl/findings"
)

// Fields the API server rejects when spec.os.name is windows (the list of
// https://kubernetes.io/docs/concepts/windows/pod-security as the issue
// gives it).
var (
	podForbidden       = []string{"runAsUser", "runAsGroup", "seccompProfile", "seLinuxOptions", "fsGroup", "sysctls"}
	containerForbidden = []string{"runAsUser", "runAsGroup", "seccompProfile", "capabilities", "seLinuxOptions", "privileged", "allowPrivilegeEscalation", "procMount", "readOnlyRootFilesystem"}
)

// pod is one pod template being checked.
type pod struct {
	obj  Object
	spec field
	path []string
	// className is spec.runtimeClassName; class is that RuntimeClass when
	// it is among the inputs.
	className string
	class     *runtimeClass
	// osName is true when spec.os.name is windows.
	osName bool
}

func (p *pod) at(parts ...string) string { return joinPath(append(slices.Clone(p.path), parts...)...) }

func (c *wchecker) pod(obj Object) {
	spec, sp := obj.podSpec()
	if !spec.ok() {
		return
	}
	p := &pod{obj: obj, spec: spec, path: sp, className: str(get(spec.Value, "runtimeClassName").Value)}
	if rc, ok := c.classes[p.className]; ok && p.className != "" {
		p.class = &rc
	}
	why := p.windowsReason()
	if why == "" {
		return
	}
	if p.osName {
		c.forbidden(p, "", get(spec.Value, "securityContext"), podForbidden, p.at("securityContext"))
	}
	c.toleration(p, why)
	for _, list := range []string{"initContainers", "containers", "ephemeralContainers"} {
		for i, ct := range items(get(spec.Value, list).Value) {
			c.container(p, &container{node: ct, name: str(get(ct, "name").Value), list: list, path: p.at(fmt.Sprintf("%s[%d]", list, i))})
		}
	}
}

// windowsReason says why the pod lands on Windows nodes, or "".
func (p *pod) windowsReason() string {
	switch str(path(p.spec.Value, "os", "name").Value) {
	case "windows":
		p.osName = true
		return "spec.os.name is windows"
	case "":
	default:
		return ""
	}
	if str(path(p.spec.Value, "nodeSelector", LabelOS).Value) == "windows" {
		return "its nodeSelector has kubernetes.io/os: windows"
	}
	if p.class != nil && p.class.windows() {
		return fmt.Sprintf("RuntimeClass %s schedules it onto Windows nodes", p.class.obj.Name)
	}
	if windowsAffinity(path(p.spec.Value, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms").Value) {
		return "its required node affinity selects kubernetes.io/os In [windows]"
	}
	return ""
}

// windowsAffinity reports whether every node selector term requires
// kubernetes.io/os In [windows].
func windowsAffinity(terms *yaml.Node) bool {
	ts := items(terms)
	for _, t := range ts {
		found := false
		for _, e := range items(get(t, "matchExpressions").Value) {
			vals := items(get(e, "values").Value)
			if str(get(e, "key").Value) == LabelOS && str(get(e, "operator").Value) == "In" &&
				len(vals) == 1 && str(vals[0]) == "windows" {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return len(ts) > 0
}

// forbidden reports the fields of a securityContext the API server rejects
// for Windows pods. It rejects them whatever their value, false included.
func (c *wchecker) forbidden(p *pod, ctr string, sc field, names []string, at string) {
	for _, name := range names {
		f := get(sc.Value, name)
		if !f.ok() || f.Value.Tag == "!!null" {
			continue
		}
		c.add(RuleWindowsForbiddenField, findings.Error, p.obj, ctr, f.Line(),
			"%s.%s is forbidden in a pod with spec.os.name: windows (whatever its value): the API server rejects the object; remove it", at, name)
	}
}

// toleration warns when neither the pod nor its RuntimeClass tolerates the
// Windows taint. When the pod names a RuntimeClass that is not among the
// inputs, it says so instead: that class's tolerations are unknown.
func (c *wchecker) toleration(p *pod, why string) {
	t := c.o.WindowsTaint
	if t == (Taint{}) {
		return
	}
	tf := get(p.spec.Value, "tolerations")
	all := items(tf.Value)
	if p.class != nil {
		all = append(all, p.class.tolerations...)
	}
	for _, tol := range all {
		if tolerates(tol, t) {
			return
		}
	}
	line := tf.Line()
	if line == 0 {
		line = p.spec.Line()
	}
	if p.className != "" && p.class == nil {
		c.add(RuleMissingWindowsToleration, findings.Warning, p.obj, "", get(p.spec.Value, "runtimeClassName").Line(),
			"RuntimeClass %s not given: pass its manifest to check its tolerations and node selector; "+
				"the pod lands on Windows (%s) and does not itself tolerate the Windows taint %s", p.className, why, t)
		return
	}
	c.add(RuleMissingWindowsToleration, findings.Warning, p.obj, "", line,
		"the pod lands on Windows (%s) but neither it nor its RuntimeClass tolerates the Windows taint %s: it stays Pending on tainted Windows nodes; add the toleration, or name the taint your nodes use (imgctl check-workload --windows-taint)", why, t)
}

// tolerates applies Kubernetes' Toleration.ToleratesTaint.
func tolerates(tol *yaml.Node, t Taint) bool {
	if e := str(get(tol, "effect").Value); e != "" && e != t.Effect {
		return false
	}
	if k := str(get(tol, "key").Value); k != "" && k != t.Key {
		return false
	}
	switch str(get(tol, "operator").Value) {
	case "Exists":
		return true
	case "", "Equal":
		return str(get(tol, "key").Value) == t.Key && str(get(tol, "value").Value) == t.Value
	}
	return false
}
