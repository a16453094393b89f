package buildtest

import (
	"fmt"
	"slices"
	"strings"
)

// configTOML renders a buildkitd.toml: the OCI worker (runc) on, the
// containerd worker off, and plain-HTTP access to the given registry hosts.
func configTOML(root, runc string, insecure []string, debug bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "root = %q\ndebug = %t\n\n", root, debug)
	fmt.Fprintf(&b, "[worker.oci]\n  enabled = true\n  binary = %q\n  snapshotter = \"auto\"\n  gc = false\n\n", runc)
	b.WriteString("[worker.containerd]\n  enabled = false\n")
	hosts := slices.Clone(insecure)
	slices.Sort(hosts)
	for _, h := range slices.Compact(hosts) {
		fmt.Fprintf(&b, "\n[registry.%q]\n  http = true\n  insecure = true\n", h)
	}
	return b.String()
}
