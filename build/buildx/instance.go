// Package buildx turns a builder instance made by `docker buildx create`
// into imgctl build nodes. It reads buildx's own builder store (BUILDX_CONFIG,
// else DOCKER_CONFIG/buildx) through buildx's store and builder packages and
// connects through buildx's driver packages, so that a remote,
// docker-container or kubernetes instance reaches its daemons exactly as
// `docker buildx build --builder NAME` does, starting them when they are not
// running.
package buildx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/docker/buildx/builder"
	"github.com/docker/buildx/driver"
	"github.com/docker/buildx/store"
	"github.com/docker/buildx/store/storeutil"
	"github.com/docker/buildx/util/confutil"
	"github.com/docker/buildx/util/dockerutil"
	"github.com/docker/cli/cli/command"
	"github.com/docker/cli/cli/flags"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/moby/buildkit/client"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/imgctl/imgctl/build/nodes"
	"github.com/imgctl/imgctl/platform"
)

// EnvBuilder names the environment variable that selects a builder
// instance, as buildx reads it.
const EnvBuilder = "BUILDX_BUILDER"

// AddrScheme prefixes the Addr of a buildx node's nodes.Builder:
// buildx://INSTANCE/NODE names the node; its Dialer connects.
const AddrScheme = nodes.InstanceScheme

// ErrUnknownInstance is returned (wrapped) when the store has no builder
// instance of the name; the message lists the instances it has.
var ErrUnknownInstance = errors.New("no such buildx builder")

// ErrUnsupportedDriver is returned (wrapped) for an instance whose driver
// imgctl does not link in (docker, cloud, or kubernetes in a binary built
// with the nokubernetes tag).
var ErrUnsupportedDriver = errors.New("buildx driver not supported")

// ErrDriver is returned (wrapped) when buildx cannot initialise the driver
// of a node, for example a kubernetes node without a kubeconfig.
var ErrDriver = errors.New("buildx driver cannot be initialised")

// Instance is a builder instance from buildx's store with its drivers
// initialised. Nothing has been contacted yet.
type Instance struct {
	// Name is the instance's name in the store.
	Name string
	// Driver is the instance's driver: remote, docker-container or kubernetes.
	Driver string
	// Dir is the buildx config directory the instance was read from.
	Dir string
	// Nodes are the instance's nodes in store order; the first is where
	// buildx sends the platforms no node lists.
	Nodes []Node
}

// Node is one node of an instance.
type Node struct {
	// Name is the node's name in the instance.
	Name string
	// Endpoint is the node's endpoint as the store holds it: the daemon's
	// address for remote, the Docker endpoint for docker-container, a
	// kubernetes:// URL for kubernetes.
	Endpoint string
	// Platforms are the platforms the node was created with
	// (docker buildx create --platform); empty when none were given.
	Platforms []v1.Platform
	// DriverOpts are the driver options the driver was initialised with
	// (docker buildx create --driver-opt).
	DriverOpts map[string]string
	// Builder reaches the node through its driver (Builder.Dialer).
	Builder nodes.Builder
}

// Option configures Load.
type Option func(*options)

type options struct {
	stderr io.Writer
}

// WithStderr sends the Docker CLI's warnings (a config file it cannot
// read) to w instead of discarding them.
func WithStderr(w io.Writer) Option { return func(o *options) { o.stderr = w } }

// InstanceName returns the builder instance name that selects a buildx
// instance, "" when the builder is an address or nothing names one. The
// precedence: flag (imgctl build --builder) when set, as an instance name
// unless it holds "://" (then it is a BuildKit address); else nothing when
// $BUILDKIT_HOST is set (an address); else $BUILDX_BUILDER. getenv nil
// means no environment.
func InstanceName(flag string, getenv func(string) string) (name, source string) {
	if s := strings.TrimSpace(flag); s != "" {
		if IsAddress(s) {
			return "", ""
		}
		return s, nodes.SourceOption
	}
	if getenv == nil || strings.TrimSpace(getenv(nodes.EnvBuildkitHost)) != "" {
		return "", ""
	}
	if s := strings.TrimSpace(getenv(EnvBuilder)); s != "" {
		return s, "$" + EnvBuilder
	}
	return "", ""
}

// newDockerCli is the Docker CLI buildx's store and drivers read their
// configuration through: the current context, DOCKER_CONFIG, BUILDX_CONFIG.
func newDockerCli(opts []Option) (*command.DockerCli, error) {
	o := options{stderr: io.Discard}
	for _, opt := range opts {
		opt(&o)
	}
	dockerCli, err := command.NewDockerCli(command.WithErrorStream(o.stderr))
	if err != nil {
		return nil, fmt.Errorf("docker CLI: %w", err)
	}
	if err := dockerCli.Initialize(flags.NewClientOptions()); err != nil {
		return nil, fmt.Errorf("docker CLI: %w", err)
	}
	return dockerCli, nil
}

// Current returns the builder instance `docker buildx use NAME` made
// current for the current Docker context, as buildx reads it
// (store.Txn.Current with the context's endpoint, through buildx's
// dockerutil and store packages), and the context's name. It returns ""
// when nothing was selected, or only the context's own docker-driver
// builder (buildx's implicit default, which imgctl cannot drive), and when
// there is no buildx store at all.
func Current(opts ...Option) (name, context string, err error) {
	dockerCli, err := newDockerCli(opts)
	if err != nil {
		return "", "", err
	}
	dir := confutil.NewConfig(dockerCli).Dir()
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return "", dockerCli.CurrentContext(), nil
	}
	txn, release, err := storeutil.GetStore(dockerCli)
	if err != nil {
		return "", "", fmt.Errorf("buildx store %s: %w", dir, err)
	}
	defer release()
	ep, err := dockerutil.GetCurrentEndpoint(dockerCli)
	if err != nil {
		return "", "", fmt.Errorf("docker context %q: %w", dockerCli.CurrentContext(), err)
	}
	ng, err := txn.Current(ep)
	if err != nil {
		return "", "", fmt.Errorf("buildx store %s: current builder: %w", dir, err)
	}
	if ng == nil {
		return "", dockerCli.CurrentContext(), nil
	}
	return ng.Name, dockerCli.CurrentContext(), nil
}

// IsAddress reports whether a --builder value is a BuildKit address
// (unix://, tcp://, docker-container://NAME...) rather than an instance name.
func IsAddress(s string) bool { return strings.Contains(s, "://") }

// Load reads the instance name from buildx's store and initialises the
// driver of every node with buildx's own code (builder.New, LoadNodes, and
// the driver factories registered by this package's imports). It takes the
// store's lock only while it reads. It contacts no daemon: each node's
// Builder.Dialer boots the node (driver.Boot) when the build connects.
func Load(ctx context.Context, name string, opts ...Option) (*Instance, error) {
	dockerCli, err := newDockerCli(opts)
	if err != nil {
		return nil, err
	}
	dir := confutil.NewConfig(dockerCli).Dir()
	txn, release, err := storeutil.GetStore(dockerCli)
	if err != nil {
		return nil, fmt.Errorf("buildx store %s: %w", dir, err)
	}
	defer release()
	ng, err := txn.NodeGroupByName(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || store.IsErrInvalidName(err) {
			return nil, unknown(txn, name, dir, err)
		}
		return nil, fmt.Errorf("buildx store %s: builder %q: %w", dir, name, err)
	}
	if err := supported(ng.Driver); err != nil {
		return nil, fmt.Errorf("buildx builder %q: %w", ng.Name, err)
	}
	b, err := builder.New(dockerCli, builder.WithName(ng.Name), builder.WithStore(txn), builder.WithSkippedValidation())
	if err != nil {
		return nil, fmt.Errorf("%w: buildx builder %q: %w", ErrDriver, ng.Name, err)
	}
	loaded, err := b.LoadNodes(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: buildx builder %q (driver %s): %w", ErrDriver, ng.Name, ng.Driver, err)
	}
	in := &Instance{Name: ng.Name, Driver: ng.Driver, Dir: dir}
	var errs []error
	for _, n := range loaded {
		if n.Err != nil || n.Driver == nil {
			errs = append(errs, fmt.Errorf("%w: buildx builder %q, node %q (driver %s): %w", ErrDriver, ng.Name, n.Name, ng.Driver, n.Err))
			continue
		}
		in.Nodes = append(in.Nodes, in.node(n))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(in.Nodes) == 0 {
		return nil, fmt.Errorf("%w: buildx builder %q has no nodes", ErrDriver, ng.Name)
	}
	return in, nil
}

// node turns a loaded buildx node into an imgctl one.
func (in *Instance) node(n builder.Node) Node {
	out := Node{Name: n.Name, Endpoint: n.Endpoint, DriverOpts: n.Driver.Config().DriverOpts}
	for _, p := range n.Node.Platforms {
		out.Platforms = append(out.Platforms, imgctlPlatform(p))
	}
	out.Builder = nodes.Builder{
		Addr:   AddrScheme + in.Name + "/" + n.Name,
		Source: fmt.Sprintf("buildx builder %s, driver %s, endpoint %s", in.Name, in.Driver, n.Endpoint),
		Dialer: &nodeDialer{h: n.Driver},
	}
	return out
}

// BuildNodes maps the instance onto imgctl's scale-out nodes the way buildx
// spreads platforms: each platform a node was created with goes to that
// node, and the first node is the fallback for the platforms no node
// lists. A node without platforms that is not the first builds nothing;
// unused names those nodes. One node without platforms makes no nodes: the
// fallback builds every platform, as a single builder does.
func (in *Instance) BuildNodes() (ns []nodes.Node, fallback nodes.Builder, unused []string) {
	for i, n := range in.Nodes {
		if len(n.Platforms) == 0 && i > 0 {
			unused = append(unused, n.Name)
		}
		for _, p := range n.Platforms {
			ns = append(ns, nodes.Node{Platform: p, Builder: n.Builder})
		}
	}
	return ns, in.Nodes[0].Builder, unused
}

// nodeDialer connects to a node through its buildx driver.
type nodeDialer struct{ h *driver.DriverHandle }

// Dial boots the node as buildx does before a build (a docker-container or
// kubernetes node that is not running is started) and returns the driver's
// client.
func (d *nodeDialer) Dial(ctx context.Context) (*client.Client, error) {
	return driver.Boot(ctx, ctx, d.h, nil)
}

// imgctlPlatform converts a store platform into a node platform.
func imgctlPlatform(p ocispecs.Platform) v1.Platform {
	return platform.Normalize(v1.Platform{
		OS: p.OS, Architecture: p.Architecture, Variant: p.Variant,
		OSVersion: p.OSVersion, OSFeatures: slices.Clone(p.OSFeatures),
	})
}

// supported refuses a driver that no linked-in factory provides.
func supported(name string) error {
	var names []string
	for _, f := range driver.GetFactories(true) {
		if f.Name() == name {
			return nil
		}
		names = append(names, f.Name())
	}
	return fmt.Errorf("%w: %q (imgctl builds with %s)", ErrUnsupportedDriver, name, strings.Join(names, ", "))
}

// unknown names the instances the store holds.
func unknown(txn *store.Txn, name, dir string, cause error) error {
	ngs, err := txn.List()
	if err != nil {
		return fmt.Errorf("%w %q in %s: %w", ErrUnknownInstance, name, dir, cause)
	}
	var names []string
	for _, ng := range ngs {
		names = append(names, fmt.Sprintf("%s (%s)", ng.Name, ng.Driver))
	}
	known := "none; create one with docker buildx create"
	if len(names) > 0 {
		known = strings.Join(names, ", ")
	}
	return fmt.Errorf("%w %q in %s (known: %s)", ErrUnknownInstance, name, dir, known)
}
