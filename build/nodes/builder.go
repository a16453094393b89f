package nodes

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/moby/buildkit/client"
	// Connection helpers for docker-container://, kube-pod://, ssh:// and
	// friends register themselves with client.New.
	_ "github.com/moby/buildkit/client/connhelper/dockercontainer"
	_ "github.com/moby/buildkit/client/connhelper/kubepod"
	_ "github.com/moby/buildkit/client/connhelper/nerdctlcontainer"
	_ "github.com/moby/buildkit/client/connhelper/podmancontainer"
	_ "github.com/moby/buildkit/client/connhelper/ssh"
)

// EnvBuildkitHost names the environment variable that holds the default
// BuildKit address, as buildctl reads it.
const EnvBuildkitHost = "BUILDKIT_HOST"

// DefaultBuilderAddress is the address used when neither a builder nor
// BUILDKIT_HOST is given: rootful buildkitd's default socket.
const DefaultBuilderAddress = "unix:///run/buildkit/buildkitd.sock"

// Where a builder address came from, as Builder.Source names it. Select
// names the caller's own inputs as SelectInput.Names says (imgctl's CLI:
// --builder, --node, --builders); these are the names it replaces.
const (
	SourceOption  = "the builder option"
	SourceEnv     = EnvBuildkitHost
	SourceDefault = "default"
)

// ErrNoBuilder is returned (wrapped) when no BuildKit daemon answers at the
// builder address.
var ErrNoBuilder = errors.New("no BuildKit daemon reachable")

// ErrNoBuilderGiven is matched (errors.Is), besides ErrNoBuilder, by the
// error about an unreachable default address (SourceDefault): nothing
// named a builder.
var ErrNoBuilderGiven = errors.New("no builder given")

// unreachableError is the error of a daemon that does not answer: it
// wraps ErrNoBuilder and, for the default address, matches
// ErrNoBuilderGiven.
type unreachableError struct {
	err      error
	fallback bool
}

func (e unreachableError) Error() string        { return e.err.Error() }
func (e unreachableError) Unwrap() error        { return e.err }
func (e unreachableError) Is(target error) bool { return e.fallback && target == ErrNoBuilderGiven }

// unreachable is b's unreachableError for cause.
func (b Builder) unreachable(cause error) error {
	return unreachableError{fmt.Errorf("%w at %s: %w", ErrNoBuilder, b, cause), b.Source == SourceDefault || b.Source == ""}
}

// ErrInvalidBuilder is returned (wrapped) for a builder address or TLS
// setting that cannot be used.
var ErrInvalidBuilder = errors.New("invalid builder")

// ErrCertWithoutKey is returned (wrapped, with ErrInvalidBuilder) for TLS
// settings with a client certificate and no key, or a key and no
// certificate.
var ErrCertWithoutKey = errors.New("the client certificate and key go together")

// DefaultPingTimeout bounds the check that the daemon answers.
const DefaultPingTimeout = 5 * time.Second

// Builder addresses one BuildKit daemon.
type Builder struct {
	// Addr is unix://PATH, tcp://HOST:PORT, docker-container://NAME or any
	// scheme a BuildKit connection helper handles.
	Addr string
	// Source says where Addr came from: SourceOption, SourceEnv,
	// SourceDefault, SourceNodeOption or SourceBuildersFile and the file
	// (as Select returns them: the InputNames of those), or a builder
	// instance's node.
	Source string
	// TLS configures a tcp:// connection; the zero value means no TLS.
	TLS TLSOptions
	// PingTimeout bounds the reachability check; zero means DefaultPingTimeout.
	PingTimeout time.Duration
	// Dialer, when set, opens the daemon's client instead of
	// client.New(Addr): a buildx builder node connects through its own
	// driver (remote, docker-container, kubernetes; see package
	// build/buildx), which may start the daemon first. Addr then only
	// names the node, and TLS stays empty: the driver has its own settings.
	Dialer Dialer
}

// Dialer opens a client to a daemon its own way. Implementations are
// pointers, so that a Builder stays comparable.
type Dialer interface {
	Dial(ctx context.Context) (*client.Client, error)
}

// TLSOptions are the client TLS settings for a tcp:// builder.
type TLSOptions struct {
	// CACert is the CA bundle that signs the daemon's certificate.
	CACert string
	// Cert and Key are the client certificate and key.
	Cert, Key string
	// ServerName overrides the name checked in the daemon's certificate.
	ServerName string
}

func (t TLSOptions) enabled() bool { return t != TLSOptions{} }

// ResolveBuilder picks the builder address: flag when set, else
// getenv(BUILDKIT_HOST), else DefaultBuilderAddress. getenv nil means no
// environment.
func ResolveBuilder(flag string, getenv func(string) string) Builder {
	if s := strings.TrimSpace(flag); s != "" {
		return Builder{Addr: s, Source: SourceOption}
	}
	if getenv != nil {
		if s := strings.TrimSpace(getenv(EnvBuildkitHost)); s != "" {
			return Builder{Addr: s, Source: SourceEnv}
		}
	}
	return Builder{Addr: DefaultBuilderAddress, Source: SourceDefault}
}

// String names the builder and where its address came from, for errors.
func (b Builder) String() string {
	switch b.Source {
	case SourceEnv:
		return fmt.Sprintf("%s (from $%s)", b.Addr, EnvBuildkitHost)
	case SourceDefault, "":
		return fmt.Sprintf("%s (the default: no builder was given and $%s is not set)", b.Addr, EnvBuildkitHost)
	}
	return fmt.Sprintf("%s (from %s)", b.Addr, b.Source)
}

// Validate checks the address and TLS settings without connecting.
func (b Builder) Validate() error {
	if b.Addr == "" {
		return fmt.Errorf("%w: empty address", ErrInvalidBuilder)
	}
	if b.Dialer != nil && b.TLS.enabled() {
		return fmt.Errorf("%w %s: TLS options do not apply: its driver connects with its own settings", ErrInvalidBuilder, b)
	}
	_, err := b.clientOpts()
	return err
}

// dial opens the client: through the Dialer when set, else client.New
// with the TLS settings.
func (b Builder) dial(ctx context.Context) (*client.Client, error) {
	if b.Dialer != nil {
		return b.Dialer.Dial(ctx)
	}
	opts, err := b.clientOpts()
	if err != nil {
		return nil, err
	}
	return client.New(ctx, b.Addr, opts...)
}

// clientOpts turns the TLS settings into BuildKit client options.
func (b Builder) clientOpts() ([]client.ClientOpt, error) {
	if !b.TLS.enabled() {
		return nil, nil
	}
	if !strings.HasPrefix(b.Addr, "tcp://") {
		return nil, fmt.Errorf("%w %s: TLS options need a tcp:// address", ErrInvalidBuilder, b)
	}
	if (b.TLS.Cert == "") != (b.TLS.Key == "") {
		return nil, fmt.Errorf("%w %s: %w", ErrInvalidBuilder, b, ErrCertWithoutKey)
	}
	var opts []client.ClientOpt
	if b.TLS.CACert != "" {
		opts = append(opts, client.WithServerConfig(b.TLS.ServerName, b.TLS.CACert))
	} else {
		opts = append(opts, client.WithServerConfigSystem(b.TLS.ServerName))
	}
	if b.TLS.Cert != "" {
		opts = append(opts, client.WithCredentials(b.TLS.Cert, b.TLS.Key))
	}
	return opts, nil
}

// Connect dials the builder (through its Dialer when set) and checks, within
// PingTimeout, that it lists its workers. The caller closes the client.
func Connect(ctx context.Context, b Builder) (*client.Client, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	c, err := b.dial(ctx)
	if err != nil {
		return nil, b.unreachable(err)
	}
	timeout := b.PingTimeout
	if timeout == 0 {
		timeout = DefaultPingTimeout
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ws, err := c.ListWorkers(pctx)
	if err == nil && len(ws) == 0 {
		err = errors.New("the daemon has no workers")
	}
	if err != nil {
		_ = c.Close()
		return nil, b.unreachable(err)
	}
	return c, nil
}
