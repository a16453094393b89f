package cli

import (
	"github.com/spf13/pflag"
)

// nodeFlags are imgctl build's scale-out flags: which BuildKit node builds
// which platforms (nodes.Select reads them).
type nodeFlags struct {
	nodes        []string
	buildersFile string
}

func (f *nodeFlags) add(fl *pflag.FlagSet) {
	fl.StringArrayVar(&f.nodes, "node", nil, "BuildKit node for a platform, PLATFORM=ADDR, repeatable; PLATFORM is linux/amd64, linux/arm64, windows, "+
		"windows/amd64:10.0.26100 or ltsc2025; tcp:// nodes use the --tls* flags; platforms without a node go to --builder or $BUILDKIT_HOST")
	fl.StringVar(&f.buildersFile, "builders", "", "YAML or JSON file of nodes: a list of {platform, address, tls: {ca, cert, key, server_name}} (--node wins for the same platform)")
}
