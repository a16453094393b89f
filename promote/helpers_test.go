package promote

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/imgctl/imgctl/findings"
	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/internal/testing/signtest"
	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/policy"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/sign"
	"github.com/imgctl/imgctl/snapshot"
	"github.com/imgctl/imgctl/verify"
)

// chainPolicy is a supply-chain policy over regtest.SupplyChainIndex:
// BuildKit's or imgctl rebase's provenance, and an SBOM, for every image.
const chainPolicy = `supplyChain:
  - platforms: ["*"]
    provenance: true
    builders:
      - buildType: https://mobyproject.org/buildkit@v1
      - builderId: https://github.com/imgctl/*
        buildType: https://github.com/imgctl/imgctl/rebase/v1
    sbom: true
`

// testKey is an in-memory ECDSA key with its public key written to a file.
type testKey struct {
	sv   signature.SignerVerifier
	path string
}

func newKey(t *testing.T) testKey {
	t.Helper()
	k := signtest.NewKey(t)
	return testKey{k.Signer, k.PublicPath}
}

// pushSigned pushes x to reg at repoTag and, unless k is nil, signs it
// recursively, attestation manifests included; it returns the digest
// reference.
func pushSigned(t *testing.T, reg *regtest.Registry, repoTag string, x any, k *testKey, referrers bool) name.Digest {
	t.Helper()
	ref, d, err := reg.PushTag(repoTag, x)
	if err != nil {
		t.Fatal(err)
	}
	dr := ref.Context().Digest(d.String())
	if k != nil {
		if _, err := sign.Sign(context.Background(), dr, k.sv, sign.Options{Attestations: true, Referrers: referrers}); err != nil {
			t.Fatal(err)
		}
	}
	return dr
}

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
	rc := registry.New()
	g.Registry = rc
	_, s, err := rc.Snapshot(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := g.Check(context.Background(), ref.String(), ref.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	return rep, rc.Requests()
}

func rulesOf(rep *verify.Report) []string {
	var out []string
	for _, f := range rep.Findings {
		if f.Severity == findings.Error {
			out = append(out, f.Rule+" "+f.Platform)
		}
	}
	slices.Sort(out)
	return out
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

// loadSnap reads the index ref points at as a snapshot.
func loadSnap(t *testing.T, ref name.Reference) *snapshot.Snapshot {
	t.Helper()
	_, s, err := registry.New().Snapshot(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
