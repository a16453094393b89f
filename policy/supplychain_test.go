package policy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/internal/testing/gatetest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/internal/testing/signtest"
	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/sign"
	"github.com/imgctl/imgctl/snapshot"
	"github.com/imgctl/imgctl/verify"
)

// The build types and builder ids of the fixtures: BuildKit's v0.2
// provenance (no builder id) and imgctl rebase's v1 provenance.
const (
	buildkitType = "https://mobyproject.org/buildkit@v1"
	rebaseType   = "https://github.com/imgctl/imgctl/rebase/v1"
)

func parse(t *testing.T, doc, dir string) *Policy {
	t.Helper()
	p, err := Parse([]byte(doc), dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParseSupplyChain(t *testing.T) {
	t.Parallel()
	p := parse(t, gatetest.ChainPolicy+"  - platforms: [windows/*, linux/amd64]\n    keys: [release.pub]\n", "/etc/imgctl")
	want := []SupplyChain{
		{Platforms: []string{"*"}, Provenance: true, SBOM: true,
			Builders: []Builder{{BuildType: buildkitType}, {BuilderID: "https://github.com/imgctl/*", BuildType: rebaseType}}},
		{Platforms: []string{"windows/*", "linux/amd64"}, Keys: []string{"release.pub"}},
	}
	if fmt.Sprint(p.SupplyChain) != fmt.Sprint(want) {
		t.Fatalf("read as %+v, want %+v", p.SupplyChain, want)
	}
	if got := p.paths(p.SupplyChain[1].Keys); got[0] != "/etc/imgctl/release.pub" {
		t.Errorf("key path %v, want it relative to the policy", got)
	}
	if _, err := Parse([]byte("rules: {errors: [missing-provenance], ignore: [missing-sbom, untrusted-builder]}\n"), ""); err != nil {
		t.Errorf("the new rules cannot be overridden: %v", err)
	}
}

// chainGate is the gate of a policy document (keys relative to dir) and
// key files, checking the one Windows build of the fixtures.
func chainGate(t *testing.T, doc, dir string, keys ...string) *Gate {
	t.Helper()
	g := gate(t, parse(t, doc, dir), keys...)
	g.Verify.Targets = regtest.Must(platform.ParseTargets([]string{"ltsc2025"}))(t)
	return g
}

// check runs the gate on what ref points at with a fresh client and
// returns the report and the client's request count.
func check(t *testing.T, g *Gate, ref name.Reference) (*verify.Report, int64) {
	t.Helper()
	return gatetest.Check(t, ref, func(ctx context.Context, rc *registry.Client, ref name.Reference, s *snapshot.Snapshot) (*verify.Report, error) {
		g.Registry = rc
		return g.Check(ctx, ref.String(), ref.Context(), s)
	})
}

// TestGateSupplyChain: the policy's requirements over attestations read
// from a registry, per platform; attestations are read only for the images
// a requirement covers.
func TestGateSupplyChain(t *testing.T) {
	t.Parallel()
	reg := regtest.New(t)
	full := reg.MustRef(t, "app:full")
	regtest.MustPush(t, full, regtest.Must(regtest.SupplyChainIndex(true))(t))
	noSBOM := reg.MustRef(t, "app:nosbom")
	regtest.MustPush(t, noSBOM, regtest.Must(regtest.SupplyChainIndex(false))(t))
	bare := reg.MustRef(t, "app:bare")
	regtest.MustPush(t, bare, regtest.Must(regtest.AttestedIndex([]v1.Image{
		regtest.Must(regtest.LinuxImage("amd64"))(t), regtest.Must(regtest.WindowsImage(regtest.OSVersionLTSC2025))(t)}))(t))
	const win, lin = "windows/amd64:10.0.26100.6584", "linux/amd64"

	for _, tc := range []struct {
		name, doc string
		ref       name.Reference
		want      []string
	}{
		{"everything there", gatetest.ChainPolicy, full, nil},
		{"no SBOM", gatetest.ChainPolicy, noSBOM, []string{"missing-sbom " + lin, "missing-sbom " + win}},
		{"SBOM required of Windows only", "supplyChain: [{platforms: [windows/*], sbom: true}]\n", noSBOM, []string{"missing-sbom " + win}},
		{"rebase's builder not trusted", "supplyChain: [{platforms: ['*'], provenance: true, builders: [{buildType: " + buildkitType + "}]}]\n", full,
			[]string{"untrusted-builder " + win}},
		{"builder id must match too", "supplyChain: [{platforms: ['*'], provenance: true, builders: [{buildType: '*', builderId: https://github.com/docker/buildx*}]}]\n", full,
			[]string{"untrusted-builder " + lin, "untrusted-builder " + win}},
		{"no attestations", gatetest.ChainPolicy, bare, []string{"missing-provenance " + lin, "missing-provenance " + win, "missing-sbom " + lin, "missing-sbom " + win}},
		{"ignored by the rules", gatetest.ChainPolicy + "rules: {ignore: [missing-sbom]}\n", noSBOM, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, _ := check(t, chainGate(t, tc.doc, ""), tc.ref)
			want := tc.want
			if got := gatetest.ErrorRules(rep); !slices.Equal(got, want) || rep.Passed != (len(want) == 0) {
				t.Fatalf("errors %v (passed %t), want %v", got, rep.Passed, want)
			}
		})
	}

	t.Run("request count", func(t *testing.T) {
		_, plain := check(t, gate(t, nil), full)
		_, uncovered := check(t, chainGate(t, "supplyChain: [{platforms: [linux/s390x], provenance: true, sbom: true}]\n", ""), full)
		_, linux := check(t, chainGate(t, "supplyChain: [{platforms: [linux/*], provenance: true, sbom: true}]\n", ""), full)
		_, all := check(t, chainGate(t, gatetest.ChainPolicy, ""), full)
		// Per covered image: its attestation manifest and its provenance
		// statement; the SBOM is known by its annotation.
		if uncovered != plain || linux != plain+2 || all != plain+4 {
			t.Errorf("requests: %d without a policy, %d covering nothing, %d covering Linux, %d covering all; want +0, +2, +4", plain, uncovered, linux, all)
		}
	})
}

// TestGatePlatformKeys: with signed: all, a supply-chain entry's keys are
// required of the images of its platforms only, through sign.Verify; by
// default (signed: reference) of the index, whose signature covers them.
func TestGatePlatformKeys(t *testing.T) {
	t.Parallel()
	reg := regtest.New(t)
	k, win := signtest.NewKey(t), signtest.NewKey(t)
	src := gatetest.PushSigned(t, reg, "app:1", regtest.Must(regtest.SupplyChainIndex(true))(t), k.Signer, false)
	dir := t.TempDir()
	for n, path := range map[string]string{"ci.pub": k.PublicPath, "windows.pub": win.PublicPath} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	byRef := "keys: [ci.pub]\nsupplyChain:\n  - {platforms: [linux/*], keys: [ci.pub]}\n  - {platforms: [windows/*], keys: [windows.pub]}\n"
	doc := "signed: all\n" + byRef
	rep, _ := check(t, chainGate(t, byRef, dir), src)
	if got := gatetest.ErrorRules(rep); !slices.Equal(got, []string{sign.RuleBadSignature + " "}) {
		t.Fatalf("signed: reference: errors %v, want the index not signed by windows.pub, and only it", got)
	}
	if rep.Signatures == nil || rep.Signatures.Scope != "reference" || !slices.Equal(rep.Signatures.Digests, []string{src.DigestStr()}) {
		t.Fatalf("signed: reference: checked %+v, want the index's digest alone", rep.Signatures)
	}
	rep, _ = check(t, chainGate(t, doc, dir), src)
	if got := gatetest.ErrorRules(rep); !slices.Equal(got, []string{sign.RuleBadSignature + " windows/amd64:10.0.26100.6584"}) {
		t.Fatalf("errors %v, want the Windows image not signed by windows.pub, and only it", got)
	}
	s := gatetest.LoadSnap(t, src)
	for _, e := range s.Entries {
		if p := e.Platform(); p != nil && p.OS == "windows" && !e.IsAttestation() {
			if _, err := sign.Sign(context.Background(), src.Context().Digest(e.Descriptor.Digest.String()), win.Signer, sign.Options{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if rep, _ := check(t, chainGate(t, doc, dir), src); !rep.Passed || len(rep.Signatures.Digests) != len(sign.Subjects(s)) {
		t.Fatalf("signed by both keys: %v, checked %+v", gatetest.ErrorRules(rep), rep.Signatures)
	}
	if rep, _ := check(t, chainGate(t, byRef, dir), src); rep.Passed {
		t.Fatal("signed: reference passed with the index unsigned by windows.pub")
	}
	if _, err := sign.Sign(context.Background(), src, win.Signer, sign.Options{}); err != nil {
		t.Fatal(err)
	}
	if rep, _ := check(t, chainGate(t, byRef, dir), src); !rep.Passed {
		t.Fatalf("signed: reference, the index signed by both keys: %v", gatetest.ErrorRules(rep))
	}
}
