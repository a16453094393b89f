package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/imgctl/imgctl/kube"
	"github.com/imgctl/imgctl/snapshot"
	"github.com/imgctl/imgctl/verify"
)

const nodesFlag = "nodes"

// nodesValue is the --nodes flag. It reads and parses the inventory when
// the flag is set, so a bad file fails as a usage error (exit 2) before any
// registry request.
type nodesValue struct {
	cmd   *cobra.Command
	path  string
	nodes []kube.Node
}

func (v *nodesValue) String() string { return v.path }

func (v *nodesValue) Type() string { return "FILE" }

func (v *nodesValue) Set(p string) error {
	var r io.Reader = v.cmd.InOrStdin()
	name := "stdin"
	if p != "-" {
		f, err := os.Open(p)
		if err != nil {
			return fmt.Errorf("reading nodes: %w", err)
		}
		defer f.Close()
		r, name = f, p
	}
	nodes, err := kube.ReadNodes(r)
	if err != nil {
		return fmt.Errorf("reading nodes from %s: %w", name, err)
	}
	v.path, v.nodes = p, nodes
	return nil
}

// addNodesFlag registers --nodes on the verify command.
func addNodesFlag(cmd *cobra.Command) {
	cmd.Flags().Var(&nodesValue{cmd: cmd}, nodesFlag,
		"check against the cluster's nodes: a FILE with the output of kubectl get nodes -o json (- for stdin); each node is a target with the engine its containerRuntimeVersion names, and the nodes replace the default ltsc2022,ltsc2025 targets (--windows still applies, --engine does not apply to nodes)")
}

// mergeNodes checks the --nodes inventory, if given, against the snapshot
// and merges the result into the report. explicitTargets keeps the rows and
// findings of --windows; otherwise the nodes replace the default targets.
func mergeNodes(cmd *cobra.Command, snap *snapshot.Snapshot, rep *verify.Report, explicitTargets bool) {
	if nodes := nodesOf(cmd); len(nodes) > 0 {
		kube.Merge(rep, kube.CheckNodes(snap, nodes), !explicitTargets)
	}
}

// nodesOf returns the --nodes inventory, or nil.
func nodesOf(cmd *cobra.Command) []kube.Node {
	f := cmd.Flags().Lookup(nodesFlag)
	if f == nil {
		return nil
	}
	if v, ok := f.Value.(*nodesValue); ok {
		return v.nodes
	}
	return nil
}
