package nodes

import (
	"fmt"
	"maps"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/build/variant"
	"github.com/imgctl/imgctl/platform"
)

// FallbackLabel is the Assignment.Label of variants solved on the fallback
// builder (--builder or $BUILDKIT_HOST) of a scale-out build.
const FallbackLabel = "builder"

// Assignment says which daemon solves a variant.
type Assignment struct {
	// Builder is the daemon.
	Builder Builder
	// Label names the daemon in progress output: the node platforms mapped
	// to its address (linux/amd64,linux/arm64 or windows), FallbackLabel
	// for the fallback builder, or empty for a single-builder build.
	Label string
	// Windows reports that the daemon was mapped as a node for a Windows
	// platform: a RUN in a Windows stage is allowed there when its daemon
	// has a Windows worker (see NativeWindows).
	Windows bool
}

// AssignNodes gives every variant its daemon. Without nodes every variant
// goes to fallback. With nodes each platform goes to its most specific
// node, else to fallback when fallback.Addr is set; platforms that end up
// on different daemons are split out of their variant (the linux variant
// becomes linux-amd64 and linux-arm64), while platforms that share a
// daemon stay in one solve. Platforms with neither a node nor a fallback
// make an error wrapping ErrUnmappedPlatforms that lists them all.
func AssignNodes(vs []variant.Variant, nodes []Node, fallback Builder) ([]variant.Variant, []Assignment, error) {
	if len(nodes) == 0 {
		as := make([]Assignment, len(vs))
		for i := range as {
			as[i] = Assignment{Builder: fallback}
		}
		return vs, as, nil
	}
	if err := checkNodes(nodes); err != nil {
		return nil, nil, err
	}
	labels := nodeLabels(nodes)
	var out []variant.Variant
	var as []Assignment
	var unmapped []string
	for _, v := range vs {
		var groups []Assignment
		var plats [][]v1.Platform
		for _, p := range v.Platforms {
			a, ok := assignPlatform(nodes, labels, fallback, p)
			if !ok {
				unmapped = append(unmapped, platform.Format(p))
				continue
			}
			j := 0
			for j < len(groups) && groups[j].Builder.Addr != a.Builder.Addr {
				j++
			}
			if j == len(groups) {
				groups, plats = append(groups, a), append(plats, nil)
			}
			plats[j] = append(plats[j], p)
		}
		for j, a := range groups {
			sv := v
			if len(groups) > 1 {
				sv.Name, sv.Platforms, sv.BuildArgs = v.Name+"-"+platformsSuffix(plats[j]), plats[j], maps.Clone(v.BuildArgs)
			}
			out, as = append(out, sv), append(as, a)
		}
	}
	if len(unmapped) > 0 {
		return nil, nil, fmt.Errorf("%w: %s, and there is no fallback builder", ErrUnmappedPlatforms, strings.Join(unmapped, ", "))
	}
	return out, as, nil
}

func assignPlatform(nodes []Node, labels map[string]string, fallback Builder, p v1.Platform) (Assignment, bool) {
	if i := nodeFor(nodes, p); i >= 0 {
		n := nodes[i]
		return Assignment{Builder: n.Builder, Label: labels[n.Builder.Addr], Windows: n.Platform.OS == "windows"}, true
	}
	if fallback.Addr == "" {
		return Assignment{}, false
	}
	label := labels[fallback.Addr]
	if label == "" {
		label = FallbackLabel
	}
	return Assignment{Builder: fallback, Label: label}, true
}

// nodeLabels names each node address by the platforms mapped to it.
func nodeLabels(nodes []Node) map[string]string {
	labels := map[string]string{}
	for _, n := range nodes {
		p := FormatNodePlatform(n.Platform)
		if l := labels[n.Builder.Addr]; l != "" {
			p = l + "," + p
		}
		labels[n.Builder.Addr] = p
	}
	return labels
}

// platformsSuffix names a split variant: amd64, arm64-v7, freebsd-amd64.
func platformsSuffix(ps []v1.Platform) string {
	parts := make([]string, 0, len(ps))
	for _, p := range ps {
		n := platform.Normalize(p)
		s := n.Architecture
		if n.Variant != "" {
			s += "-" + n.Variant
		}
		if n.OS != "linux" {
			s = n.OS + "-" + s
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "-")
}
