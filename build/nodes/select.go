package nodes

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// InstanceScheme prefixes the Addr of a builder instance's node
// (buildx://INSTANCE/NODE, see package build/buildx), whose Dialer
// connects. A builders file entry replaces such a node of its platform.
const InstanceScheme = "buildx://"

// ErrInvalidSelection is matched (errors.Is) by Select's errors about a
// builder instance: one that cannot be read, and TLS settings given for
// one. Its text is not part of theirs.
var ErrInvalidSelection = errors.New("invalid builder selection")

// ErrTLSForInstance is returned (wrapped, matching ErrInvalidSelection)
// when TLS settings are given with a builder instance and no nodes: the
// instance's driver keeps its own.
var ErrTLSForInstance = errors.New("TLS settings given for a builder instance")

// Inputs of Select that an InputError names.
const (
	// InputBuildersFile is SelectInput.BuildersFile.
	InputBuildersFile = "BuildersFile"
	// InputNodes is one of SelectInput.Nodes, the InputError's Value.
	InputNodes = "Nodes"
)

// InputError is an error of Select about one of its inputs: the builders
// file, or one of the Nodes values. Its message is Err's, so that a caller
// names the input its own way (imgctl build: --builders, --node VALUE).
type InputError struct {
	// Input is InputBuildersFile or InputNodes.
	Input string
	// Value is the Nodes value at fault; empty for the builders file.
	Value string
	// Err is the cause; it wraps ErrInvalidNode or ErrInvalidBuilder.
	Err error
}

// Error is Err's message.
func (e *InputError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *InputError) Unwrap() error { return e.Err }

// selectionError is an error about a builder instance: it matches
// ErrInvalidSelection and reads as err.
type selectionError struct{ err error }

func (e selectionError) Error() string        { return e.err.Error() }
func (e selectionError) Unwrap() error        { return e.err }
func (e selectionError) Is(target error) bool { return target == ErrInvalidSelection }

// Instances are the builder instances of docker buildx (package
// build/buildx reads them), as Select consults them.
type Instances interface {
	// Name returns the instance that builder (an address or an instance
	// name) or the environment selects and where the name came from; ""
	// when builder is an address or nothing names an instance.
	Name(builder string, getenv func(string) string) (name, source string)
	// Current returns the instance made current (docker buildx use) and
	// where the name came from; "" when there is none.
	Current() (name, source string, err error)
	// Load reads the instance: its nodes, and the fallback builder for the
	// platforms none of them builds.
	Load(ctx context.Context, name string) (nodes []Node, fallback Builder, err error)
}

// InputNames are the names of Select's inputs as the caller's user knows
// them, for messages and Builder.Source: imgctl's CLI passes its flags
// (--builder, --node, --builders). Empty fields keep the package's names
// (SourceOption, SourceNodeOption, SourceBuildersFile).
type InputNames struct {
	// Builder names SelectInput.Builder.
	Builder string
	// Node names one of SelectInput.Nodes.
	Node string
	// BuildersFile names SelectInput.BuildersFile.
	BuildersFile string
}

// label returns the caller's name for a Builder.Source that Select or the
// Instances gave: SourceOption, SourceNodeOption, or SourceBuildersFile
// and a path. Any other source is returned as it is.
func (n InputNames) label(source string) string {
	rename := func(name, fallback string) string {
		if name == "" {
			return fallback
		}
		return name
	}
	switch {
	case source == SourceOption:
		return rename(n.Builder, source)
	case source == SourceNodeOption:
		return rename(n.Node, source)
	case strings.HasPrefix(source, SourceBuildersFile+" "):
		return rename(n.BuildersFile, SourceBuildersFile) + strings.TrimPrefix(source, SourceBuildersFile)
	}
	return source
}

// SelectInput is what Select picks a build's daemons from: imgctl build's
// --builder, --tls*, --node and --builders, and the environment.
type SelectInput struct {
	// Builder is a BuildKit address or a builder instance's name; empty
	// for none.
	Builder string
	// Getenv reads the environment ($BUILDKIT_HOST, and what Instances
	// read); nil means none.
	Getenv func(string) string
	// TLS are the client TLS settings of a tcp:// builder and tcp:// nodes.
	TLS TLSOptions
	// Nodes are PLATFORM=ADDR values, as ParseNodePlatform reads PLATFORM.
	Nodes []string
	// BuildersFile is a builders file (LoadBuilders); empty for none.
	BuildersFile string
	// Instances, when set, are the builder instances that Builder or the
	// environment may name; nil means that Builder is an address.
	Instances Instances
	// Names name the inputs in messages and in the Builder.Source of
	// what Select returns.
	Names InputNames
}

// Select picks a build's daemons: the fallback builder (zero for none) and
// the nodes. The builder is, in this order: the instance Builder names
// when it is no address; Builder; $BUILDKIT_HOST; the instance the
// environment names (Instances.Name: $BUILDX_BUILDER); when neither Builder
// nor $BUILDKIT_HOST is set, the current instance; DefaultBuilderAddress.
// An instance gives its nodes and its fallback, and takes no TLS settings
// unless Nodes are given. Then each builders file entry replaces an
// instance's node of its platform, or is added, and each Nodes value
// replaces an instance's or a file's node of its platform, or is added (a
// platform given twice is AssignNodes' error, and a pool for bake: Pool).
// With nodes, the builder is
// only the fallback for the platforms none of them builds: the default
// address is none, and a builder that is no tcp:// address keeps no TLS
// settings. The fallback is checked (Builder.Validate); nothing is
// contacted. Errors about the builders file and the Nodes values are
// *InputError (wrapping ErrInvalidNode or ErrInvalidBuilder); those about
// an instance match ErrInvalidSelection. The Source of what Select
// returns, and its own messages, name the inputs as in.Names says; the
// builders file's errors, from LoadBuilders, name the file as the
// builders file, and the caller names it its way (InputError).
func Select(ctx context.Context, in SelectInput) (Builder, []Node, error) {
	fallback, nodes, err := in.builder(ctx)
	if err != nil {
		return Builder{}, nil, err
	}
	if fallback, nodes, err = in.addNodes(fallback, nodes); err != nil {
		return Builder{}, nil, err
	}
	fallback.Source = in.Names.label(fallback.Source)
	for i := range nodes {
		nodes[i].Builder.Source = in.Names.label(nodes[i].Builder.Source)
	}
	if fallback.Addr != "" {
		if err := fallback.Validate(); err != nil {
			return Builder{}, nil, err
		}
	}
	return fallback, nodes, nil
}

func (in SelectInput) getenv(k string) string {
	if in.Getenv == nil {
		return ""
	}
	return in.Getenv(k)
}

// builder is the builder before the builders file and the Nodes values: an
// address, or an instance's fallback and nodes.
func (in SelectInput) builder(ctx context.Context) (Builder, []Node, error) {
	var name, source string
	if in.Instances != nil {
		name, source = in.Instances.Name(in.Builder, in.Getenv)
		if name == "" && strings.TrimSpace(in.Builder) == "" && in.getenv(EnvBuildkitHost) == "" {
			// Last, as buildx: the instance `docker buildx use` made current.
			cur, src, err := in.Instances.Current()
			if err != nil {
				return Builder{}, nil, selectionError{fmt.Errorf("reading the current buildx builder: %w", err)}
			}
			if cur != "" {
				name, source = cur, src
			}
		}
	}
	if name == "" {
		b := ResolveBuilder(in.Builder, in.Getenv)
		b.TLS = in.TLS
		return b, nil, nil
	}
	if in.TLS != (TLSOptions{}) && len(in.Nodes) == 0 {
		return Builder{}, nil, selectionError{fmt.Errorf("%w: buildx builder %q (from %s) keeps its TLS settings in its driver-opts; they are for tcp:// addresses",
			ErrTLSForInstance, name, in.Names.label(source))}
	}
	nodes, fallback, err := in.Instances.Load(ctx, name)
	if err != nil {
		return Builder{}, nil, selectionError{fmt.Errorf("%s: %w", in.Names.label(source), err)}
	}
	return fallback, nodes, nil
}

// addNodes adds to nodes (an instance's, if any) the builders file's
// entries and the Nodes values, and with nodes makes fallback only the
// fallback.
func (in SelectInput) addNodes(fallback Builder, nodes []Node) (Builder, []Node, error) {
	if in.BuildersFile != "" {
		ns, err := LoadBuilders(in.BuildersFile)
		if err != nil {
			return Builder{}, nil, &InputError{Input: InputBuildersFile, Err: err}
		}
		for _, n := range ns {
			nodes = replaceNode(nodes, n, fromInstance)
		}
	}
	for _, s := range in.Nodes {
		n, err := parseNode(s, in.TLS)
		if err != nil {
			return Builder{}, nil, &InputError{Input: InputNodes, Value: s, Err: err}
		}
		n.Builder.Source = in.Names.label(n.Builder.Source)
		if err := n.Builder.Validate(); err != nil {
			return Builder{}, nil, &InputError{Input: InputNodes, Value: s, Err: err}
		}
		nodes = replaceNode(nodes, n, func(m Node) bool { return m.Builder.Source != n.Builder.Source })
	}
	if len(nodes) == 0 {
		return fallback, nodes, nil
	}
	switch {
	case fallback.Source == SourceDefault:
		fallback = Builder{}
	case !strings.HasPrefix(fallback.Addr, "tcp://"):
		fallback.TLS = TLSOptions{} // the TLS settings are for the tcp:// nodes
	}
	return fallback, nodes, nil
}

// replaceNode puts n in place of a node of the same platform that
// replaceable accepts, else appends it (a duplicate is then refused by
// AssignNodes).
func replaceNode(nodes []Node, n Node, replaceable func(Node) bool) []Node {
	k := FormatNodePlatform(n.Platform)
	for i, m := range nodes {
		if FormatNodePlatform(m.Platform) == k && replaceable(m) {
			nodes[i] = n
			return nodes
		}
	}
	return append(nodes, n)
}

// fromInstance accepts the nodes of a builder instance: a builders file
// entry replaces them.
func fromInstance(n Node) bool { return strings.HasPrefix(n.Builder.Addr, InstanceScheme) }

// parseNode reads a Nodes value, PLATFORM=ADDR. A tcp:// node gets tls;
// other schemes take no TLS settings.
func parseNode(s string, tls TLSOptions) (Node, error) {
	ps, addr, ok := strings.Cut(s, "=")
	addr = strings.TrimSpace(addr)
	if !ok || addr == "" {
		return Node{}, fmt.Errorf("%w: want PLATFORM=ADDR", ErrInvalidNode)
	}
	p, err := ParseNodePlatform(ps)
	if err != nil {
		return Node{}, err
	}
	b := Builder{Addr: addr, Source: SourceNodeOption}
	if strings.HasPrefix(addr, "tcp://") {
		b.TLS = tls
	}
	return Node{Platform: p, Builder: b}, nil
}
