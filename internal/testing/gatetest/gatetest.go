// Package gatetest holds what the tests of policy's gate and of promote,
// which runs that gate, both need: signed pushes to an in-process
// registry, the supply-chain policy over regtest.SupplyChainIndex, and a
// gate run with a fresh client whose requests are counted. It imports no
// package under test that imports it back: the gate is passed in as a
// function.
package gatetest

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/imgctl/imgctl/findings"
	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/sign"
	"github.com/imgctl/imgctl/snapshot"
	"github.com/imgctl/imgctl/verify"
)

// ChainPolicy is a supply-chain policy over regtest.SupplyChainIndex:
// BuildKit's or imgctl rebase's provenance, and an SBOM, for every image.
const ChainPolicy = `supplyChain:
  - platforms: ["*"]
    provenance: true
    builders:
      - buildType: https://mobyproject.org/buildkit@v1
      - builderId: https://github.com/imgctl/*
        buildType: https://github.com/imgctl/imgctl/rebase/v1
    sbom: true
`

// PushSigned pushes x to reg at repoTag and, unless sv is nil, signs it
// recursively, attestation manifests included, in cosign's tag format or
// also as referrers; it returns the digest reference.
func PushSigned(t *testing.T, reg *regtest.Registry, repoTag string, x any, sv signature.SignerVerifier, referrers bool) name.Digest {
	t.Helper()
	ref, d, err := reg.PushTag(repoTag, x)
	if err != nil {
		t.Fatal(err)
	}
	dr := ref.Context().Digest(d.String())
	if sv != nil {
		if _, err := sign.Sign(context.Background(), dr, sv, sign.Options{Attestations: true, Referrers: referrers}); err != nil {
			t.Fatal(err)
		}
	}
	return dr
}

// LoadSnap reads the index ref points at as a snapshot.
func LoadSnap(t *testing.T, ref name.Reference) *snapshot.Snapshot {
	t.Helper()
	_, s, err := registry.New().Snapshot(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// CheckFunc runs a gate over s, read from ref, with rc as its client.
type CheckFunc func(ctx context.Context, rc *registry.Client, ref name.Reference, s *snapshot.Snapshot) (*verify.Report, error)

// Check reads what ref points at with a fresh client, runs check with
// that client, and returns the report and the client's request count.
func Check(t *testing.T, ref name.Reference, check CheckFunc) (*verify.Report, int64) {
	t.Helper()
	rc := registry.New()
	_, s, err := rc.Snapshot(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := check(context.Background(), rc, ref, s)
	if err != nil {
		t.Fatal(err)
	}
	return rep, rc.Requests()
}

// ErrorRules lists the report's errors as "rule platform", sorted.
func ErrorRules(rep *verify.Report) []string {
	var out []string
	for _, f := range rep.Findings {
		if f.Severity == findings.Error {
			out = append(out, f.Rule+" "+f.Platform)
		}
	}
	slices.Sort(out)
	return out
}
