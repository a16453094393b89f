package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/imgctl/imgctl/build"
	"github.com/imgctl/imgctl/build/buildx"
	"github.com/imgctl/imgctl/build/nodes"
)

// selectBuilder sets bo.Builder and bo.Nodes from --builder, the --tls*
// flags, --builders and --node, $BUILDKIT_HOST, $BUILDX_BUILDER and last
// the instance `docker buildx use` made current (nodes.Select has the
// precedence; buildxInstances reads the instances): an address, or a
// buildx builder instance whose nodes become bo.Nodes (the first node is
// the fallback), and then the --builders entries and --node values, which
// win for their platforms. Errors wrap ErrUsage.
func (o *buildOptions) selectBuilder(ctx context.Context, bo *build.Options, stderr io.Writer) error {
	fallback, ns, err := nodes.Select(ctx, nodes.SelectInput{
		Builder: o.builder, Getenv: os.Getenv, TLS: o.tls,
		Nodes: o.nodes, BuildersFile: o.buildersFile,
		Instances: buildxInstances{stderr: stderr},
		Names:     nodes.InputNames{Builder: "--builder", Node: "--node", BuildersFile: "--builders"},
	})
	if err != nil {
		return selectError(err)
	}
	bo.Builder, bo.Nodes = fallback, ns
	return nil
}

// selectError wraps an error of nodes.Select in ErrUsage, naming the flag
// an input error is about.
func selectError(err error) error {
	var ie *nodes.InputError
	if errors.As(err, &ie) {
		switch ie.Input {
		case nodes.InputBuildersFile:
			return fmt.Errorf("%w: --builders: %w", ErrUsage, err)
		case nodes.InputNodes:
			return fmt.Errorf("%w: --node %s: %w", ErrUsage, ie.Value, err)
		}
	}
	return fmt.Errorf("%w: %w", ErrUsage, err)
}

// buildxInstances are docker buildx's builder instances, as nodes.Select
// consults them; stderr gets the Docker CLI's warnings and a note about
// nodes imgctl sends nothing.
type buildxInstances struct{ stderr io.Writer }

// Name is buildx.InstanceName.
func (x buildxInstances) Name(builder string, getenv func(string) string) (string, string) {
	return buildx.InstanceName(builder, getenv)
}

// Current is buildx.Current, the instance named after the Docker context.
func (x buildxInstances) Current() (string, string, error) {
	cur, dctx, err := buildx.Current(buildx.WithStderr(x.stderr))
	if err != nil || cur == "" {
		return "", "", err
	}
	return cur, fmt.Sprintf("docker buildx use (current builder of Docker context %s)", dctx), nil
}

// Load reads the instance (buildx.Load) and maps its nodes (BuildNodes).
func (x buildxInstances) Load(ctx context.Context, name string) ([]nodes.Node, nodes.Builder, error) {
	in, err := buildx.Load(ctx, name, buildx.WithStderr(x.stderr))
	if err != nil {
		return nil, nodes.Builder{}, err
	}
	ns, fallback, unused := in.BuildNodes()
	if len(unused) > 0 {
		fmt.Fprintf(x.stderr, "note: buildx builder %s: node(s) %s list no platforms and are not the first node: imgctl sends them nothing (give them --platform with docker buildx create --append)\n",
			in.Name, strings.Join(unused, ", "))
	}
	return ns, fallback, nil
}
