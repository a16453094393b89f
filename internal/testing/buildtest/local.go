package buildtest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// Local is what stands in for the outside world on one machine: an
// in-process registry for the real one, the distroless-like and
// nanoserver-like bases in it for gcr.io and MCR, and a buildkitd that
// reaches the registry over plain HTTP. The release dry run
// (internal/tools/release/cmd/release -dry-run) builds against it.
type Local struct {
	// Registry is the in-process registry.
	Registry *regtest.Registry
	// Bases are the run-time bases SeedRuntimeBases pushed (no golang).
	Bases Bases
	// Builder is the buildkitd.
	Builder *Daemon
}

// StartLocal starts the registry, seeds the run-time bases and starts
// buildkitd (bin/buildkitd). Close stops them.
func StartLocal(ctx context.Context) (*Local, error) {
	reg, err := regtest.Start()
	if err != nil {
		return nil, err
	}
	l := &Local{Registry: reg}
	if l.Bases, err = SeedRuntimeBases(reg.Host()); err != nil {
		reg.Close()
		return nil, fmt.Errorf("seeding bases: %w", err)
	}
	l.Builder, err = StartBuildkitd(ctx, Options{InsecureRegistries: []string{reg.Host()}, StartTimeout: time.Minute})
	if err != nil {
		reg.Close()
		return nil, err
	}
	return l, nil
}

// Close stops buildkitd (removing its root) and the registry.
func (l *Local) Close() error {
	err := l.Builder.Close()
	l.Registry.Close()
	if err != nil {
		return errors.Join(fmt.Errorf("stopping buildkitd: %w", err), fmt.Errorf("buildkitd log:\n%s", l.Builder.LogTail(20)))
	}
	return nil
}
