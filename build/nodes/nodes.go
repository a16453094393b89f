// Package nodes addresses BuildKit daemons and schedules a build on them:
// the builder address and its TLS settings (Builder, ResolveBuilder,
// Connect), the nodes of a scale-out build (--node PLATFORM=ADDR, a
// builders file, a docker buildx builder instance) and the precedence
// between them (Select), and the assignment of each variant to its daemon
// (AssignNodes). It plans with package build/variant and never solves:
// package build drives the daemons it picks.
package nodes

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/build/variant"
	"github.com/imgctl/imgctl/platform"
)

// Where a node's address came from, as Builder.Source names it. A builders
// file node's Source is SourceBuildersFile followed by the file's path.
// Select names them as SelectInput.Names says.
const (
	SourceNodeOption   = "a node option"
	SourceBuildersFile = "the builders file"
)

// ErrInvalidNode is returned (wrapped) for a node value (SelectInput.Nodes)
// or builders file entry that cannot be used.
var ErrInvalidNode = errors.New("invalid node")

// ErrUnmappedPlatforms is returned (wrapped) when nodes are given, some
// target platforms match none of them and there is no fallback builder.
var ErrUnmappedPlatforms = errors.New("no node builds these platforms")

var osOnlyRe = regexp.MustCompile(`^[a-z0-9_-]+$`)

// Node is one BuildKit daemon of a scale-out build and the target
// platforms it builds.
type Node struct {
	// Platform selects the target platforms the node builds: an OS alone
	// (windows, linux), os/arch[/variant], or windows/amd64:OSVERSION (or
	// an LTSC name such as ltsc2025) for one Windows release. When several
	// nodes match a platform, the most specific one wins.
	Platform v1.Platform
	// Builder addresses the daemon.
	Builder Builder
}

// String formats the node as PLATFORM=ADDR, as --node takes it.
func (n Node) String() string { return FormatNodePlatform(n.Platform) + "=" + n.Builder.Addr }

// ParseNodePlatform reads a node's platform: an OS alone (windows), an LTSC
// release name (ltsc2022), or os/arch[/variant][:os.version].
func ParseNodePlatform(s string) (v1.Platform, error) {
	in := strings.ToLower(strings.TrimSpace(s))
	if r, ok := variant.ReleaseByName(in); ok {
		return variant.WindowsPlatform(r), nil
	}
	if osOnlyRe.MatchString(in) {
		return v1.Platform{OS: in}, nil
	}
	p, err := platform.Parse(in)
	if err != nil {
		return v1.Platform{}, fmt.Errorf("%w: platform %q: %w", ErrInvalidNode, s, err)
	}
	return platform.Normalize(p), nil
}

// FormatNodePlatform formats a node platform the way ParseNodePlatform
// reads it: the OS alone when there is no architecture.
func FormatNodePlatform(p v1.Platform) string {
	if p.Architecture == "" {
		return p.OS
	}
	return platform.Format(p)
}

// nodeScore is how specifically node platform np selects target platform
// p: -1 when it does not, else 1 for the OS plus 1 for each of
// architecture, variant and Windows build that it names.
func nodeScore(np, p v1.Platform) int {
	if np.Architecture != "" {
		np = platform.Normalize(np)
	}
	p = platform.Normalize(p)
	if np.OS != p.OS {
		return -1
	}
	score := 1
	for _, c := range [][2]string{{np.Architecture, p.Architecture}, {np.Variant, p.Variant}} {
		if c[0] == "" {
			continue
		}
		if c[0] != c[1] {
			return -1
		}
		score++
	}
	if np.OSVersion != "" {
		nb, _ := platform.Build(np.OSVersion)
		pb, ok := platform.Build(p.OSVersion)
		if !ok || nb != pb {
			return -1
		}
		score++
	}
	return score
}

// nodeFor returns the index of the most specific node for p, or -1.
func nodeFor(nodes []Node, p v1.Platform) int {
	best, bestScore := -1, 0
	for i, n := range nodes {
		if s := nodeScore(n.Platform, p); s > bestScore {
			best, bestScore = i, s
		}
	}
	return best
}

// checkNodes refuses a platform given twice and one address with two
// different TLS settings.
func checkNodes(nodes []Node) error {
	plats := map[string]string{}
	tls := map[string]TLSOptions{}
	for _, n := range nodes {
		if n.Builder.Addr == "" {
			return fmt.Errorf("%w: %s: empty address", ErrInvalidNode, FormatNodePlatform(n.Platform))
		}
		k := FormatNodePlatform(n.Platform)
		if prev, ok := plats[k]; ok {
			return fmt.Errorf("%w: platform %s is mapped twice (%s and %s)", ErrInvalidNode, k, prev, n.Builder.Addr)
		}
		plats[k] = n.Builder.Addr
		if t, ok := tls[n.Builder.Addr]; ok && t != n.Builder.TLS {
			return fmt.Errorf("%w: %s has different TLS settings for different platforms", ErrInvalidNode, n.Builder.Addr)
		}
		tls[n.Builder.Addr] = n.Builder.TLS
	}
	return nil
}
