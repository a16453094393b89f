package promote

import (
	"context"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/internal/testing/gatetest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/policy"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/sign"
	"github.com/imgctl/imgctl/snapshot"
	"github.com/imgctl/imgctl/verify"
)

func parse(t *testing.T, doc, dir string) *policy.Policy {
	t.Helper()
	p, err := policy.Parse([]byte(doc), dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func gate(t *testing.T, p *policy.Policy, keys ...string) *policy.Gate {
	t.Helper()
	g, err := policy.NewGate(p, verify.Options{}, keys, sign.ScopeReference)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// chainGate is the gate of a policy document (keys relative to dir) and
// key files, checking the one Windows build of the fixtures.
func chainGate(t *testing.T, doc, dir string, keys ...string) *policy.Gate {
	t.Helper()
	g := gate(t, parse(t, doc, dir), keys...)
	g.Verify.Targets = regtest.Must(platform.ParseTargets([]string{"ltsc2025"}))(t)
	return g
}

// check runs the gate on what ref points at with a fresh client and
// returns the report and the client's request count.
func check(t *testing.T, g *policy.Gate, ref name.Reference) (*verify.Report, int64) {
	t.Helper()
	return gatetest.Check(t, ref, func(ctx context.Context, rc *registry.Client, ref name.Reference, s *snapshot.Snapshot) (*verify.Report, error) {
		g.Registry = rc
		return g.Check(ctx, ref.String(), ref.Context(), s)
	})
}

func tag(t *testing.T, reg *regtest.Registry, s string) name.Tag {
	t.Helper()
	return reg.MustRef(t, s).(name.Tag)
}

// headDigest returns what ref points at, or nil.
func headDigest(t *testing.T, ref name.Reference) *v1.Hash {
	t.Helper()
	d, err := remote.Head(ref)
	if err != nil {
		return nil
	}
	return &d.Digest
}
