package kube

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/imgctl/imgctl/findings"
)

const containerAdministrator = "ContainerAdministrator"

// container is one container of a Windows pod.
type container struct {
	node *yaml.Node
	name string
	// list is containers, initContainers or ephemeralContainers.
	list string
	path string
}

func (c *wchecker) container(p *pod, ct *container) {
	if p.osName {
		c.forbidden(p, ct.name, get(ct.node, "securityContext"), containerForbidden, ct.path+".securityContext")
	}
	c.runAsNonRoot(p, ct)
	if ct.list != "ephemeralContainers" {
		c.memoryLimit(p, ct)
	}
	c.probes(p, ct)
	c.preStop(p, ct)
}

// runAsNonRoot reports runAsNonRoot with the ContainerAdministrator user,
// taken from windowsOptions.runAsUserName (container, then pod) or, when
// neither sets it, from the image configs of the --image-index.
func (c *wchecker) runAsNonRoot(p *pod, ct *container) {
	nonRoot := path(ct.node, "securityContext", "runAsNonRoot")
	if !nonRoot.ok() {
		nonRoot = path(p.spec.Value, "securityContext", "runAsNonRoot")
	}
	if !isTrue(nonRoot.Value) {
		return
	}
	user := path(ct.node, "securityContext", "windowsOptions", "runAsUserName")
	if !user.ok() {
		user = path(p.spec.Value, "securityContext", "windowsOptions", "runAsUserName")
	}
	if user.ok() {
		if strings.EqualFold(str(user.Value), containerAdministrator) {
			c.add(RuleRunAsNonRootAdministrator, findings.Error, p.obj, ct.name, user.Line(),
				"runAsNonRoot is true (line %d) but runAsUserName is ContainerAdministrator: kubelet refuses to start the container (\"will be regarded as root identity and will break non-root policy\"); use ContainerUser", nonRoot.Line())
		}
		return
	}
	if vs := c.adminVariants(); len(vs) > 0 {
		c.add(RuleRunAsNonRootAdministrator, findings.Error, p.obj, ct.name, nonRoot.Line(),
			"runAsNonRoot is true and no runAsUserName is set, so the image's user applies, and its Windows variant(s) %s run as ContainerAdministrator: kubelet refuses to start the container; set windowsOptions.runAsUserName: ContainerUser or USER ContainerUser in the Dockerfile", strings.Join(vs, ", "))
	}
}

// adminVariants lists the os.version of the --image-index's Windows
// variants whose config user is ContainerAdministrator.
func (c *wchecker) adminVariants() []string {
	if c.o.Image == nil {
		return nil
	}
	var out []string
	for i := range c.o.Image.Entries {
		e := &c.o.Image.Entries[i]
		p := e.Platform()
		if e.Config == nil || e.IsAttestation() || p == nil || p.OS != "windows" {
			continue
		}
		if strings.EqualFold(e.Config.Config.User, containerAdministrator) {
			out = append(out, first(p.OSVersion, "(no os.version)"))
		}
	}
	return out
}

func (c *wchecker) memoryLimit(p *pod, ct *container) {
	if path(ct.node, "resources", "limits", "memory").ok() {
		return
	}
	c.add(RuleNoMemoryLimit, findings.Warning, p.obj, ct.name, ct.node.Line,
		"%s has no resources.limits.memory: Windows has no OOM killer, the job object's commit limit is the only guard, so a leak exhausts the node's memory and page file", ct.path)
}

// probes warns about exec probes with the default timeout of one second.
func (c *wchecker) probes(p *pod, ct *container) {
	for _, name := range []string{"livenessProbe", "readinessProbe", "startupProbe"} {
		pf := get(ct.node, name)
		if !get(pf.Value, "exec").ok() {
			continue
		}
		to := get(pf.Value, "timeoutSeconds")
		if to.ok() && str(to.Value) != "1" {
			continue
		}
		c.add(RuleExecProbeDefaultTimeout, findings.Warning, p.obj, ct.name, pf.Line(),
			"%s.%s is an exec probe with timeoutSeconds 1 (the default): starting a process in a Windows container often takes longer, so the probe times out and kubelet restarts the container or marks it unready; set timeoutSeconds to 5 or more", ct.path, name)
	}
}

// Shells a Windows image does not have, and PowerShell, which nanoserver
// images do not have.
var (
	posixShells = map[string]bool{"sh": true, "bash": true, "ash": true, "dash": true, "zsh": true, "ksh": true}
	powerShells = map[string]bool{"powershell": true, "pwsh": true}
)

// preStop reports a preStop exec hook that runs a POSIX shell (error: no
// Windows image has one) or PowerShell (warning: nanoserver has only
// cmd.exe). The sleep and httpGet actions need no shell.
func (c *wchecker) preStop(p *pod, ct *container) {
	f := path(ct.node, "lifecycle", "preStop", "exec", "command")
	cmd := items(f.Value)
	if len(cmd) == 0 {
		return
	}
	argv0 := str(cmd[0])
	base := strings.ToLower(argv0[strings.LastIndexAny(argv0, `/\`)+1:])
	base = strings.TrimSuffix(base, ".exe")
	switch {
	case posixShells[base]:
		c.add(RulePreStopNeedsShell, findings.Error, p.obj, ct.name, f.Line(),
			"the preStop hook runs %q, but Windows images have no POSIX shell: the hook fails and the pod is killed without its graceful stop; use the sleep action or cmd /c", argv0)
	case powerShells[base]:
		c.add(RulePreStopNeedsShell, findings.Warning, p.obj, ct.name, f.Line(),
			"the preStop hook runs %q, which nanoserver images do not have (only cmd.exe): make sure the image is based on servercore or ships PowerShell, or use the sleep action", argv0)
	}
}
