package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/imgctl/imgctl/build"
	"github.com/imgctl/imgctl/build/buildx"
)

// nodeFlags are imgctl build's scale-out flags: which BuildKit node builds
// which platforms.
type nodeFlags struct {
	nodes        []string
	buildersFile string
}

func (f *nodeFlags) add(fl *pflag.FlagSet) {
	fl.StringArrayVar(&f.nodes, "node", nil, "BuildKit node for a platform, PLATFORM=ADDR, repeatable; PLATFORM is linux/amd64, linux/arm64, windows, "+
		"windows/amd64:10.0.26100 or ltsc2025; tcp:// nodes use the --tls* flags; platforms without a node go to --builder or $BUILDKIT_HOST")
	fl.StringVar(&f.buildersFile, "builders", "", "YAML or JSON file of nodes: a list of {platform, address, tls: {ca, cert, key, server_name}} (--node wins for the same platform)")
}

// apply adds to bo.Nodes (a buildx instance's nodes, if any) the builders
// file's entries and --node values: a file entry replaces an instance's
// node of the same platform, a --node replaces either. With nodes, the builder from --builder
// or $BUILDKIT_HOST is only the fallback, and the default socket is none.
// Errors wrap ErrUsage.
func (f *nodeFlags) apply(bo *build.Options, tls build.TLSOptions) error {
	nodes := bo.Nodes // a buildx instance's, if --builder named one
	if f.buildersFile != "" {
		ns, err := build.LoadBuilders(f.buildersFile)
		if err != nil {
			return fmt.Errorf("%w: --builders: %w", ErrUsage, err)
		}
		for _, n := range ns {
			nodes = replaceNode(nodes, n, fromInstance)
		}
	}
	for _, s := range f.nodes {
		n, err := parseNode(s, tls)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrUsage, err)
		}
		if err := n.Builder.Validate(); err != nil {
			return fmt.Errorf("%w: --node %s: %w", ErrUsage, s, err)
		}
		nodes = replaceNode(nodes, n, notFromFlag)
	}
	if len(nodes) == 0 {
		return nil
	}
	bo.Nodes = nodes
	switch {
	case bo.Builder.Source == build.SourceDefault:
		bo.Builder = build.Builder{}
	case !strings.HasPrefix(bo.Builder.Addr, "tcp://"):
		bo.Builder.TLS = build.TLSOptions{} // the --tls* flags are for the tcp:// nodes
	}
	return nil
}

// replaceNode puts n in place of a node of the same platform that
// replaceable accepts, else appends it (a duplicate is then refused by
// build.AssignNodes).
func replaceNode(nodes []build.Node, n build.Node, replaceable func(build.Node) bool) []build.Node {
	k := build.FormatNodePlatform(n.Platform)
	for i, m := range nodes {
		if build.FormatNodePlatform(m.Platform) == k && replaceable(m) {
			nodes[i] = n
			return nodes
		}
	}
	return append(nodes, n)
}

// fromInstance accepts the nodes of a buildx instance: a builders file
// entry replaces them.
func fromInstance(n build.Node) bool { return strings.HasPrefix(n.Builder.Addr, buildx.AddrScheme) }

// notFromFlag accepts the nodes of a buildx instance or a builders file: a
// --node replaces them.
func notFromFlag(n build.Node) bool { return n.Builder.Source != build.SourceNode }

// parseNode reads a --node value, PLATFORM=ADDR. A tcp:// node gets tls
// (the global --tls* flags); other schemes take no TLS settings.
func parseNode(s string, tls build.TLSOptions) (build.Node, error) {
	ps, addr, ok := strings.Cut(s, "=")
	addr = strings.TrimSpace(addr)
	if !ok || addr == "" {
		return build.Node{}, fmt.Errorf("%w: --node %q: want PLATFORM=ADDR", build.ErrInvalidNode, s)
	}
	p, err := build.ParseNodePlatform(ps)
	if err != nil {
		return build.Node{}, err
	}
	b := build.Builder{Addr: addr, Source: build.SourceNode}
	if strings.HasPrefix(addr, "tcp://") {
		b.TLS = tls
	}
	return build.Node{Platform: p, Builder: b}, nil
}
