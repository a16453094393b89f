package buildtest

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
)

// configTOML renders a buildkitd.toml: the OCI worker (runc) on, the
// containerd worker off, plain-HTTP access to opts.InsecureRegistries and
// the registry mirrors of opts.Mirrors. The trace socket lives under root:
// buildkitd's default, /run/buildkit/otel-grpc.sock, is shared by every
// daemon on the machine, and two harness daemons starting at once remove
// each other's socket ("chown /run/buildkit/otel-grpc.sock: no such file").
func configTOML(root, runc string, opts Options) string {
	var b strings.Builder
	fmt.Fprintf(&b, "root = %q\ndebug = %t\n\n", root, opts.Debug)
	fmt.Fprintf(&b, "[otel]\n  socketPath = %q\n\n", filepath.Join(root, "otel-grpc.sock"))
	fmt.Fprintf(&b, "[worker.oci]\n  enabled = true\n  binary = %q\n  snapshotter = \"auto\"\n  gc = false\n\n", runc)
	b.WriteString("[worker.containerd]\n  enabled = false\n")
	hosts := slices.Collect(maps.Keys(opts.Mirrors))
	hosts = append(hosts, opts.InsecureRegistries...)
	slices.Sort(hosts)
	for _, h := range slices.Compact(hosts) {
		fmt.Fprintf(&b, "\n[registry.%q]\n", h)
		if ms := opts.Mirrors[h]; len(ms) > 0 {
			q := make([]string, len(ms))
			for i, m := range ms {
				q[i] = fmt.Sprintf("%q", m)
			}
			fmt.Fprintf(&b, "  mirrors = [%s]\n", strings.Join(q, ", "))
		}
		if slices.Contains(opts.InsecureRegistries, h) {
			b.WriteString("  http = true\n  insecure = true\n")
		}
	}
	return b.String()
}
