package kube

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/imgctl/imgctl/platform"
)

// Node is what imgctl reads of one Kubernetes node.
type Node struct {
	// Name is metadata.name.
	Name string
	// OS and Architecture come from status.nodeInfo, or from the
	// kubernetes.io/os and kubernetes.io/arch labels when it has none.
	OS, Architecture string
	// Version is the Windows version: status.nodeInfo.kernelVersion
	// (10.0.26100.2894), else the node.kubernetes.io/windows-build label
	// (10.0.26100), else the release named in osImage. It is the zero
	// Version for Linux nodes and for Windows nodes where none is readable.
	Version platform.Version
	// OSImage is status.nodeInfo.osImage, e.g. Windows Server 2025 Datacenter.
	OSImage string
	// Runtime is status.nodeInfo.containerRuntimeVersion, e.g.
	// containerd://2.1.4.
	Runtime string
}

// IsWindows reports whether the node runs Windows.
func (n Node) IsWindows() bool { return n.OS == "windows" }

// Host returns the platform the node's engine matches images against, and
// false when the node's OS, architecture or (on Windows) build is unknown.
func (n Node) Host() (platform.Platform, bool) {
	if n.OS == "" || n.Architecture == "" {
		return platform.Platform{}, false
	}
	p := platform.Platform{OS: n.OS, Architecture: n.Architecture}
	if n.IsWindows() {
		if n.Version.Build == 0 {
			return platform.Platform{}, false
		}
		p.OSVersion = n.Version.String()
	}
	return p, true
}

// nodeJSON is the subset of a v1 Node that imgctl reads.
type nodeJSON struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Status struct {
		NodeInfo struct {
			Architecture            string `json:"architecture"`
			OperatingSystem         string `json:"operatingSystem"`
			KernelVersion           string `json:"kernelVersion"`
			OSImage                 string `json:"osImage"`
			ContainerRuntimeVersion string `json:"containerRuntimeVersion"`
		} `json:"nodeInfo"`
	} `json:"status"`
}

// listJSON is a v1 List or NodeList; a single Node decodes into it too.
type listJSON struct {
	nodeJSON
	Items []nodeJSON `json:"items"`
}

// ReadNodes reads the output of `kubectl get nodes -o json`: a v1 List or
// NodeList of Node objects, or a single Node (`kubectl get node NAME -o
// json`).
func ReadNodes(r io.Reader) ([]Node, error) {
	var l listJSON
	dec := json.NewDecoder(r)
	if err := dec.Decode(&l); err != nil {
		return nil, fmt.Errorf("%w: decoding JSON: %w", ErrInvalidNodes, err)
	}
	items := l.Items
	switch l.Kind {
	case "List", "NodeList":
	case "Node":
		items = []nodeJSON{l.nodeJSON}
	default:
		return nil, fmt.Errorf("%w: kind %q: want a List of Node objects (kubectl get nodes -o json)", ErrInvalidNodes, l.Kind)
	}
	if len(items) == 0 {
		return nil, ErrNoNodes
	}
	out := make([]Node, 0, len(items))
	for i, it := range items {
		if it.Kind != "" && it.Kind != "Node" {
			return nil, fmt.Errorf("%w: item %d is a %s, not a Node", ErrInvalidNodes, i, it.Kind)
		}
		if it.Metadata.Name == "" {
			return nil, fmt.Errorf("%w: item %d has no metadata.name", ErrInvalidNodes, i)
		}
		out = append(out, it.node())
	}
	return out, nil
}

func (it nodeJSON) node() Node {
	ni, labels := it.Status.NodeInfo, it.Metadata.Labels
	n := Node{
		Name:         it.Metadata.Name,
		OS:           strings.ToLower(first(ni.OperatingSystem, labels[LabelOS])),
		Architecture: strings.ToLower(first(ni.Architecture, labels[LabelArch])),
		OSImage:      ni.OSImage,
		Runtime:      ni.ContainerRuntimeVersion,
	}
	if n.IsWindows() {
		n.Version = windowsVersion(ni.KernelVersion, labels[LabelWindowsBuild], ni.OSImage)
	}
	return n
}

// windowsVersion takes the first readable of the kernel version, the
// windows-build label and the release named in osImage.
func windowsVersion(kernel, label, osImage string) platform.Version {
	for _, s := range []string{kernel, label} {
		if v, err := platform.ParseHostVersion(strings.TrimSpace(s)); err == nil && v.Build != 0 {
			return v
		}
	}
	for _, r := range platform.Releases {
		if strings.HasPrefix(osImage, r.Server+" ") || osImage == r.Server {
			return platform.Version{Major: 10, Build: r.Build}
		}
	}
	return platform.Version{}
}

func first(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
