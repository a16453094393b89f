package kube

import (
	"fmt"
	"strings"

	"github.com/imgctl/imgctl/platform"
)

// RuntimeEngine maps status.nodeInfo.containerRuntimeVersion to the
// engine profile of that release: containerd://2.0.4+azure to
// containerd-index-order, containerd://1.7.30 to containerd-legacy,
// docker://28.3.2 to docker (platform.Ranges lists them all). Suffixes
// such as +azure, -k3s1 or -1 are read past. For any other runtime (cri-o,
// a release no range covers, an empty string) it returns nil and the
// reason.
func RuntimeEngine(runtime string) (platform.Engine, string) {
	scheme, version, ok := strings.Cut(runtime, "://")
	if !ok {
		return nil, fmt.Sprintf("container runtime %q is not in the form name://version", runtime)
	}
	switch scheme {
	case "docker", "containerd":
		e, _, err := platform.EngineForRelease(scheme, version)
		if err != nil {
			return nil, err.Error()
		}
		return e, ""
	}
	return nil, fmt.Sprintf("runtime %q has no profile (imgctl knows containerd and docker)", scheme)
}

// nodeEngines returns the engines to check a node with: its own; none for
// a runtime that is neither containerd nor Docker (CRI-O: imgctl models no
// other engine, so the node is skipped, and why says so); every profile,
// and why, for a containerd or Docker release no range covers.
func nodeEngines(n Node) ([]platform.Engine, string) {
	e, why := RuntimeEngine(n.Runtime)
	if e != nil {
		return []platform.Engine{e}, ""
	}
	scheme, _, _ := strings.Cut(n.Runtime, "://")
	if scheme != "containerd" && scheme != "docker" && scheme != "" {
		return nil, why + "; not checked"
	}
	return platform.Engines(), why + "; checked with every engine profile"
}
