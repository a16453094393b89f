package buildtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/moby/buildkit/client"
)

// Options configure StartBuildkitd.
type Options struct {
	// Binary is the buildkitd to run; empty means BuildkitdPath().
	Binary string
	// InsecureRegistries are host:port registries that are reached over plain HTTP.
	InsecureRegistries []string
	// Mirrors map a registry host to the hosts the daemon pulls it
	// through ([registry."HOST"] mirrors = [...] in buildkitd.toml), e.g.
	// a host that does not resolve to the test registry. A mirror that
	// speaks plain HTTP must be among InsecureRegistries too.
	Mirrors map[string][]string
	// StartTimeout bounds the wait for the daemon to answer; zero means one minute.
	StartTimeout time.Duration
	// Debug turns on buildkitd's debug log.
	Debug bool
	// TLS makes the daemon listen on tcp://127.0.0.1 with TLS and client
	// certificates (Daemon.TLS) instead of a unix socket.
	TLS bool
}

// Daemon is a running buildkitd with its own root directory.
type Daemon struct {
	// Addr is the daemon's gRPC address, unix://<root>/buildkitd.sock, or
	// tcp://127.0.0.1:PORT with Options.TLS.
	Addr string
	// Root is the daemon's state directory; Close removes it.
	Root string
	// LogFile receives the daemon's stdout and stderr.
	LogFile string
	// TLS holds the client's files when Options.TLS is set.
	TLS TLSFiles

	cmd       *exec.Cmd
	exited    chan struct{}
	waitErr   error
	closeOnce sync.Once
	closeErr  error
}

// StartBuildkitd starts buildkitd with a fresh root under os.TempDir() (which
// must support overlayfs) and waits until it lists its workers.
func StartBuildkitd(ctx context.Context, opts Options) (*Daemon, error) {
	bin := opts.Binary
	var err error
	if bin == "" {
		if bin, err = BuildkitdPath(); err != nil {
			return nil, err
		}
	}
	runc, err := runcPath()
	if err != nil {
		return nil, err
	}
	root, err := os.MkdirTemp(os.TempDir(), "imgctl-buildkitd-")
	if err != nil {
		return nil, fmt.Errorf("creating buildkitd root: %w", err)
	}
	d := &Daemon{
		Addr:    "unix://" + filepath.Join(root, "buildkitd.sock"),
		Root:    root,
		LogFile: filepath.Join(root, "buildkitd.log"),
		exited:  make(chan struct{}),
	}
	if err := d.start(bin, runc, opts); err != nil {
		_ = os.RemoveAll(root)
		return nil, err
	}
	timeout := opts.StartTimeout
	if timeout == 0 {
		timeout = time.Minute
	}
	if err := d.waitReady(ctx, timeout); err != nil {
		tail := d.LogTail(40)
		_ = d.Close()
		return nil, fmt.Errorf("%w\n%s", err, tail)
	}
	return d, nil
}

func (d *Daemon) start(bin, runc string, opts Options) error {
	cfg := filepath.Join(d.Root, "buildkitd.toml")
	stateDir := filepath.Join(d.Root, "state")
	if err := os.WriteFile(cfg, []byte(configTOML(stateDir, runc, opts)), 0o644); err != nil {
		return fmt.Errorf("writing buildkitd config: %w", err)
	}
	log, err := os.Create(d.LogFile)
	if err != nil {
		return fmt.Errorf("creating buildkitd log: %w", err)
	}
	defer log.Close() // the child keeps its own descriptor
	var tlsArgs []string
	if opts.TLS {
		addr, err := freeTCPAddr()
		if err != nil {
			return err
		}
		var files TLSFiles
		if tlsArgs, files, err = tlsSetup(filepath.Join(d.Root, "tls")); err != nil {
			return fmt.Errorf("TLS setup: %w", err)
		}
		d.Addr, d.TLS = "tcp://"+addr, files
	}
	d.cmd = exec.Command(bin, append([]string{"--root", stateDir, "--addr", d.Addr, "--config", cfg}, tlsArgs...)...)
	d.cmd.Stdout, d.cmd.Stderr = log, log
	d.cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(runc)+":"+os.Getenv("PATH"))
	// Its own process group, so that Close can signal runc children too.
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := d.cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", bin, err)
	}
	go func() {
		d.waitErr = d.cmd.Wait()
		close(d.exited)
	}()
	return nil
}

func (d *Daemon) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		select {
		case <-d.exited:
			return fmt.Errorf("buildkitd exited before it was ready: %v", d.waitErr)
		case <-ctx.Done():
			return fmt.Errorf("buildkitd not ready after %s: %w (last: %v)", timeout, ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
		if last = d.ping(ctx); last == nil {
			return nil
		}
	}
}

func (d *Daemon) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c, err := client.New(ctx, d.Addr, d.TLS.clientOpts()...)
	if err != nil {
		return err
	}
	defer c.Close()
	ws, err := c.ListWorkers(ctx)
	if err != nil {
		return err
	}
	if len(ws) == 0 {
		return errors.New("no workers")
	}
	return nil
}

// Client connects to the daemon; the caller closes it.
func (d *Daemon) Client(ctx context.Context) (*client.Client, error) {
	c, err := client.New(ctx, d.Addr, d.TLS.clientOpts()...)
	if err != nil {
		return nil, fmt.Errorf("connecting to buildkitd at %s: %w", d.Addr, err)
	}
	return c, nil
}

// New starts a buildkitd for the test and stops it when the test ends. It
// skips the test under -short (SkipShort); otherwise it fails the test (it
// does not skip) when buildkitd or runc is missing.
func New(t testing.TB, opts Options) *Daemon {
	t.Helper()
	SkipShort(t, NeedsBuildkitd)
	d, err := StartBuildkitd(context.Background(), opts)
	if err != nil {
		t.Fatalf("starting buildkitd: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(d.LogTail(60))
		}
		if err := d.Close(); err != nil {
			t.Errorf("stopping buildkitd: %v", err)
		}
	})
	return d
}
