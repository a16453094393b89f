package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/imgctl/imgctl/build"
	"github.com/imgctl/imgctl/build/buildx"
)

// resolveBuilder sets bo.Builder from --builder, $BUILDKIT_HOST,
// $BUILDX_BUILDER (see buildx.InstanceName for the precedence) and last the
// instance `docker buildx use` made current (buildx.Current): an address
// as before, or a buildx builder instance whose nodes become bo.Nodes (the
// first node is the fallback). --node and --builders entries are applied
// afterwards and win for their platforms. Errors wrap ErrUsage when the
// instance does not exist or the flags do not fit it.
func (o *buildOptions) resolveBuilder(ctx context.Context, bo *build.Options, stderr io.Writer) error {
	name, source := buildx.InstanceName(o.builder, os.Getenv)
	if name == "" && strings.TrimSpace(o.builder) == "" && os.Getenv(build.EnvBuildkitHost) == "" {
		// Last, as buildx: the instance `docker buildx use` made current.
		cur, dctx, err := buildx.Current(buildx.WithStderr(stderr))
		if err != nil {
			return fmt.Errorf("%w: reading the current buildx builder: %w", ErrUsage, err)
		}
		if cur != "" {
			name, source = cur, fmt.Sprintf("docker buildx use (current builder of Docker context %s)", dctx)
		}
	}
	if name == "" {
		bo.Builder = build.ResolveBuilder(o.builder, os.Getenv)
		bo.Builder.TLS = o.tls
		return nil
	}
	if o.tls != (build.TLSOptions{}) && len(o.nodes) == 0 {
		return fmt.Errorf("%w: --tlscacert/--tlscert/--tlskey/--tls-server-name are for tcp:// addresses; buildx builder %q (from %s) keeps its TLS settings in its driver-opts",
			ErrUsage, name, source)
	}
	in, err := buildx.Load(ctx, name, buildx.WithStderr(stderr))
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrUsage, source, err)
	}
	nodes, fallback, unused := in.BuildNodes()
	if len(unused) > 0 {
		fmt.Fprintf(stderr, "note: buildx builder %s: node(s) %s list no platforms and are not the first node: imgctl sends them nothing (give them --platform with docker buildx create --append)\n",
			in.Name, strings.Join(unused, ", "))
	}
	bo.Builder, bo.Nodes = fallback, nodes
	return nil
}
