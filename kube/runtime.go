package kube

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/imgctl/imgctl/platform"
)

// RuntimeEngine maps status.nodeInfo.containerRuntimeVersion to an engine
// profile: containerd://2.x and later to containerd, containerd://1.7.x to
// containerd-1.7, docker://... to docker. For any other runtime (cri-o,
// containerd 1.6 and older, an empty string) it returns nil and the reason.
func RuntimeEngine(runtime string) (platform.Engine, string) {
	scheme, version, ok := strings.Cut(runtime, "://")
	if !ok {
		return nil, fmt.Sprintf("container runtime %q is not in the form name://version", runtime)
	}
	switch scheme {
	case "docker":
		return platform.DockerEngine{}, ""
	case "containerd":
		major, minor, ok := majorMinor(version)
		switch {
		case !ok:
			return nil, fmt.Sprintf("containerd version %q is unreadable", version)
		case major >= 2:
			return platform.ContainerdEngine{}, ""
		case major == 1 && minor == 7:
			return platform.Containerd17Engine{}, ""
		}
		return nil, fmt.Sprintf("containerd %s has no profile (imgctl knows containerd 1.7 and 2.x)", version)
	}
	return nil, fmt.Sprintf("runtime %q has no profile (imgctl knows containerd and docker)", scheme)
}

// majorMinor reads "1.7.22", "v2.1.4" or "2.0.0-rc.1+azure".
func majorMinor(v string) (int, int, bool) {
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(strings.TrimRight(parts[1], "-+abcdefghijklmnopqrstuvwxyz"))
	return major, minor, err1 == nil && err2 == nil
}

// nodeEngines returns the engines to check a node with: its own, or every
// profile and a warning when the runtime is unknown.
func nodeEngines(n Node) ([]platform.Engine, string) {
	e, why := RuntimeEngine(n.Runtime)
	if e != nil {
		return []platform.Engine{e}, ""
	}
	return platform.Engines(), why
}
