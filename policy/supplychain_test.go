package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/imgctl/imgctl/findings"
	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/sign"
	"github.com/imgctl/imgctl/verify"
)

// The build types and builder ids of the fixtures: BuildKit's v0.2
// provenance (no builder id) and imgctl rebase's v1 provenance.
const (
	buildkitType = "https://mobyproject.org/buildkit@v1"
	rebaseType   = "https://github.com/imgctl/imgctl/rebase/v1"
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
	p := parse(t, chainPolicy+"  - platforms: [windows/*, linux/amd64]\n    keys: [release.pub]\n", "/etc/imgctl")
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
		{"everything there", chainPolicy, full, nil},
		{"no SBOM", chainPolicy, noSBOM, []string{"missing-sbom " + lin, "missing-sbom " + win}},
		{"SBOM required of Windows only", "supplyChain: [{platforms: [windows/*], sbom: true}]\n", noSBOM, []string{"missing-sbom " + win}},
		{"rebase's builder not trusted", "supplyChain: [{platforms: ['*'], provenance: true, builders: [{buildType: " + buildkitType + "}]}]\n", full,
			[]string{"untrusted-builder " + win}},
		{"builder id must match too", "supplyChain: [{platforms: ['*'], provenance: true, builders: [{buildType: '*', builderId: https://github.com/docker/buildx*}]}]\n", full,
			[]string{"untrusted-builder " + lin, "untrusted-builder " + win}},
		{"no attestations", chainPolicy, bare, []string{"missing-provenance " + lin, "missing-provenance " + win, "missing-sbom " + lin, "missing-sbom " + win}},
		{"ignored by the rules", chainPolicy + "rules: {ignore: [missing-sbom]}\n", noSBOM, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, _ := check(t, chainGate(t, tc.doc, ""), tc.ref)
			want := tc.want
			if got := rulesOf(rep); !slices.Equal(got, want) || rep.Passed != (len(want) == 0) {
				t.Fatalf("errors %v (passed %t), want %v", got, rep.Passed, want)
			}
		})
	}

	t.Run("request count", func(t *testing.T) {
		_, plain := check(t, gate(t, nil), full)
		_, uncovered := check(t, chainGate(t, "supplyChain: [{platforms: [linux/s390x], provenance: true, sbom: true}]\n", ""), full)
		_, linux := check(t, chainGate(t, "supplyChain: [{platforms: [linux/*], provenance: true, sbom: true}]\n", ""), full)
		_, all := check(t, chainGate(t, chainPolicy, ""), full)
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
	k, win := newKey(t), newKey(t)
	src := pushSigned(t, reg, "app:1", regtest.Must(regtest.SupplyChainIndex(true))(t), &k, false)
	dir := t.TempDir()
	for n, path := range map[string]string{"ci.pub": k.path, "windows.pub": win.path} {
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
	if got := rulesOf(rep); !slices.Equal(got, []string{sign.RuleBadSignature + " "}) {
		t.Fatalf("signed: reference: errors %v, want the index not signed by windows.pub, and only it", got)
	}
	if rep.Signatures == nil || rep.Signatures.Scope != "reference" || !slices.Equal(rep.Signatures.Digests, []string{src.DigestStr()}) {
		t.Fatalf("signed: reference: checked %+v, want the index's digest alone", rep.Signatures)
	}
	rep, _ = check(t, chainGate(t, doc, dir), src)
	if got := rulesOf(rep); !slices.Equal(got, []string{sign.RuleBadSignature + " windows/amd64:10.0.26100.6584"}) {
		t.Fatalf("errors %v, want the Windows image not signed by windows.pub, and only it", got)
	}
	s := loadSnap(t, src)
	for _, e := range s.Entries {
		if p := e.Platform(); p != nil && p.OS == "windows" && !e.IsAttestation() {
			if _, err := sign.Sign(context.Background(), src.Context().Digest(e.Descriptor.Digest.String()), win.sv, sign.Options{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if rep, _ := check(t, chainGate(t, doc, dir), src); !rep.Passed || len(rep.Signatures.Digests) != len(sign.Subjects(s)) {
		t.Fatalf("signed by both keys: %v, checked %+v", rulesOf(rep), rep.Signatures)
	}
	if rep, _ := check(t, chainGate(t, byRef, dir), src); rep.Passed {
		t.Fatal("signed: reference passed with the index unsigned by windows.pub")
	}
	if _, err := sign.Sign(context.Background(), src, win.sv, sign.Options{}); err != nil {
		t.Fatal(err)
	}
	if rep, _ := check(t, chainGate(t, byRef, dir), src); !rep.Passed {
		t.Fatalf("signed: reference, the index signed by both keys: %v", rulesOf(rep))
	}
}

// TestPromoteSupplyChain: promote copies the attestation manifests and the
// signatures of the index, of its images and of the attestation manifests
// to another registry, with and without the referrers API, and the gate
// passes there.
func TestPromoteSupplyChain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		opts      []regtest.Option
		referrers bool
	}{{"referrers API", []regtest.Option{regtest.WithReferrers()}, true}, {"fallback tag", nil, false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			k := newKey(t)
			src, prod := regtest.New(t, tc.opts...), regtest.New(t, tc.opts...)
			srcRef := pushSigned(t, src, "ci/app:1", regtest.Must(regtest.SupplyChainIndex(true))(t), &k, tc.referrers)
			s := loadSnap(t, srcRef) // signed recursively: the attestation manifests too
			var bundles []v1.Hash
			for _, e := range s.Entries {
				if e.IsAttestation() {
					bundles = append(bundles, putBundle(t, srcRef.Context(), e.Descriptor, !tc.referrers, "ci"))
				}
			}
			dst := tag(t, prod, "release/app:1.0")
			g := chainGate(t, chainPolicy, "", k.path)
			pr, err := g.Promote(ctx, srcRef.Context().Tag("1"), dst, PromoteOptions{})
			if err != nil || !pr.Pushed {
				t.Fatalf("Promote: %v %+v", err, pr)
			}
			// index + 2 images + 2 attestation manifests, each signed once.
			want := registry.ArtifactResult{Tags: 5, Referrers: 2}
			if tc.referrers {
				want.Referrers += 5
			}
			if pr.Signatures != want {
				t.Errorf("copied %+v, want %+v: the signatures of 5 manifests", pr.Signatures, want)
			}
			for _, e := range s.Entries {
				if headDigest(t, dst.Context().Digest(e.Descriptor.Digest.String())) == nil {
					t.Errorf("%s (attestation %t) is not at the destination", e.Descriptor.Digest, e.IsAttestation())
				}
			}
			attKeys := []sign.Subject{}
			for _, e := range s.Entries {
				if e.IsAttestation() {
					attKeys = append(attKeys, sign.Subject{Digest: e.Descriptor.Digest})
					refs := regtest.Must(remote.Referrers(dst.Context().Digest(e.Descriptor.Digest.String())))(t)
					im := regtest.Must(refs.IndexManifest())(t)
					// (go-containerregistry's registry lists a referrer's config
					// media type as its artifactType: the digest tells.)
					if !slices.ContainsFunc(im.Manifests, func(d v1.Descriptor) bool { return slices.Contains(bundles, d.Digest) }) {
						t.Errorf("the bundle of attestation %s is not a referrer at the destination: %+v", e.Descriptor.Digest, im.Manifests)
					}
				}
			}
			if fs, err := sign.Verify(ctx, dst.Context(), attKeys, g.Keys, sign.VerifyOptions{}); err != nil || len(fs) > 0 {
				t.Errorf("the signatures of the attestation manifests at the destination: %v %v", fs, err)
			}
			if rep, _ := check(t, chainGate(t, chainPolicy, "", k.path), dst); !rep.Passed {
				t.Errorf("the gate at the destination: %v", rulesOf(rep))
			}
		})
	}
}

const bundleType = "application/vnd.dev.sigstore.bundle.v0.3+json"

// putBundle stores a referrer of subject in repo shaped as cosign v3
// stores a Sigstore bundle (artifactType bundleType, the bundle as its one
// layer, an empty config), through the referrers API or, with fallback,
// the sha256-<digest> fallback tag. The bundle is not a valid signature:
// promote copies referrers whatever they hold.
func putBundle(t *testing.T, repo name.Repository, subject v1.Descriptor, fallback bool, keyid string) v1.Hash {
	t.Helper()
	layer := static.NewLayer([]byte(`{"mediaType":"`+bundleType+`","dsseEnvelope":{"payloadType":"application/vnd.in-toto+json","payload":"e30=","signatures":[{"keyid":"`+keyid+`","sig":""}]}}`), bundleType)
	cfg := static.NewLayer([]byte("{}"), "application/vnd.oci.empty.v1+json")
	desc := func(l v1.Layer) v1.Descriptor {
		d := regtest.Must(partial.Descriptor(l))(t)
		if err := remote.WriteLayer(repo, l); err != nil {
			t.Fatal(err)
		}
		return *d
	}
	m := v1.Manifest{SchemaVersion: 2, MediaType: types.OCIManifestSchema1, ArtifactType: bundleType, Config: desc(cfg), Layers: []v1.Descriptor{desc(layer)},
		Subject: &v1.Descriptor{MediaType: subject.MediaType, Digest: subject.Digest, Size: subject.Size}}
	raw := regtest.Must(json.Marshal(m))(t)
	if err := registry.New().PutReferrer(context.Background(), repo, registry.RawManifest{Raw: raw, Type: types.OCIManifestSchema1}, fallback); err != nil {
		t.Fatal(err)
	}
	h, _, err := v1.SHA256(bytes.NewReader(raw))
	return regtest.Must(h, err)(t)
}

// TestPromoteRequestCount: promote reads each attestation of the source
// once, whether the policy requires attestations (the gate reads them)
// or not (promote reads them to find earlier attestation manifests); at
// the destination it reads them again to check the copy: one manifest and
// one provenance statement per image.
func TestPromoteRequestCount(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	k := newKey(t)
	src, prod := regtest.New(t), regtest.New(t)
	srcRef := pushSigned(t, src, "ci/app:1", regtest.Must(regtest.SupplyChainIndex(true))(t), &k, false)
	counts := map[string][2]int{}
	for _, doc := range []string{"targets: [ltsc2025]\n", chainPolicy} {
		src.ResetStats()
		prod.ResetStats()
		g := chainGate(t, doc, "", k.path)
		if _, err := g.Promote(ctx, srcRef, tag(t, prod, fmt.Sprintf("release/app%d:1", len(counts))), PromoteOptions{}); err != nil {
			t.Fatal(err)
		}
		counts[doc] = [2]int{src.Stats().Total(), prod.Stats().Total()}
	}
	plain, chain := counts["targets: [ltsc2025]\n"], counts[chainPolicy]
	if chain[0] != plain[0] || chain[1] != plain[1]+4 {
		t.Errorf("requests (source, destination): %v without attestation rules, %v with; want the same source reads and 4 more at the destination", plain, chain)
	}
}

// TestPromotePreviousAttestations: the attestation manifests a rebase
// provenance names as predecessors, where the rebase's source keeps them
// (another repository, outside the index), and theirs in turn, are copied
// with their signatures from the repositories their package URLs name; a
// predecessor that cannot be read fails the promotion before anything is
// written.
func TestPromotePreviousAttestations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	k := newKey(t)
	src, prod := regtest.New(t), regtest.New(t)
	linux := regtest.Must(regtest.LinuxImage("amd64"))(t)
	about := regtest.Must(linux.Digest())(t)
	// BuildKit's attestation of the image as built, in ci/app; the first
	// rebase's, in the repository it wrote, ci/rebased, naming the first.
	first := regtest.Must(regtest.AttestationOf(about, regtest.ProvenanceV02(""), regtest.SPDX("busybox")))(t)
	firstRef := regtest.Must(src.Repo("ci/app"))(t).Digest(regtest.Must(first.Digest())(t).String())
	second := regtest.Must(regtest.AttestationOf(about, regtest.Must(regtest.RebaseProvenance(firstRef))(t)))(t)
	secondRef := regtest.Must(src.Repo("ci/rebased"))(t).Digest(regtest.Must(second.Digest())(t).String())
	for _, x := range []struct {
		ref name.Digest
		img v1.Image
	}{{firstRef, first}, {secondRef, second}} {
		regtest.MustPush(t, x.ref, x.img)
		if _, err := sign.Sign(ctx, x.ref, k.sv, sign.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	missing := firstRef.Context().Digest("sha256:" + strings.Repeat("0", 64))
	for _, tc := range []struct {
		name     string
		previous name.Digest
		copied   []name.Digest
	}{{"copied", secondRef, []name.Digest{secondRef, firstRef}}, {"missing at the source", missing, nil}} {
		t.Run(tc.name, func(t *testing.T) {
			idx := regtest.Must(regtest.Index(regtest.Entry{Image: linux},
				regtest.Must(regtest.AttestationEntryOf(linux, regtest.Must(regtest.RebaseProvenance(tc.previous))(t), regtest.SPDX("busybox")))(t)))(t)
			srcRef := pushSigned(t, src, "ci/rebased2:"+strings.ReplaceAll(tc.name, " ", "-"), idx, &k, false)
			dst := tag(t, prod, "release/app:"+strings.ReplaceAll(tc.name, " ", "-"))
			pr, err := gate(t, parse(t, chainPolicy, ""), k.path).Promote(ctx, srcRef, dst, PromoteOptions{})
			if tc.copied == nil {
				if err == nil || !strings.Contains(err.Error(), missing.String()) || headDigest(t, dst) != nil ||
					headDigest(t, dst.Context().Digest(srcRef.DigestStr())) != nil {
					t.Fatalf("Promote: %v; want a failure naming %s and nothing written", err, missing)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if pr.Signatures.Tags != 3+len(tc.copied) {
				t.Errorf("copied %d signature tags, want those of the index, its 2 children and the %d predecessors", pr.Signatures.Tags, len(tc.copied))
			}
			for _, ref := range tc.copied {
				d := regtest.Must(v1.NewHash(ref.DigestStr()))(t)
				if headDigest(t, dst.Context().Digest(d.String())) == nil || headDigest(t, registry.SignatureTag(dst.Context(), d, "sig")) == nil {
					t.Errorf("predecessor %s or its signature is not at the destination", ref)
				}
			}
		})
	}
}

// TestPromoteChecksDestination: when what was copied does not pass the
// gate at the destination (a registry that loses a signature tag, or an
// attestation manifest), promote fails and the tag is not written.
func TestPromoteChecksDestination(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	k := newKey(t)
	src := regtest.New(t)
	srcRef := pushSigned(t, src, "ci/app:1", regtest.Must(regtest.SupplyChainIndex(true))(t), &k, false)
	s := loadSnap(t, srcRef)
	var att v1.Hash
	for _, e := range s.Entries {
		if e.IsAttestation() {
			att = e.Descriptor.Digest
		}
	}
	lost := `{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}`
	for _, tc := range []struct {
		name  string
		fault regtest.Fault
	}{
		{"signature tag lost", regtest.Fault{Kind: regtest.FaultAnswer, Method: http.MethodGet, Suffix: ".sig", Status: 404, Body: lost}},
		{"attestation manifest lost", regtest.Fault{Kind: regtest.FaultAnswer, Method: http.MethodGet, Suffix: "/manifests/" + att.String(), Status: 404, Body: lost}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := regtest.NewFaults(tc.fault)
			prod := regtest.New(t, regtest.WithMiddleware(f.Middleware))
			dst := tag(t, prod, "release/app:1.0")
			_, err := chainGate(t, chainPolicy, "", k.path).Promote(ctx, srcRef, dst, PromoteOptions{})
			if f.Injected() == 0 || err == nil {
				t.Fatalf("Promote: %v after %d faults, want a failure", err, f.Injected())
			}
			if !errors.Is(err, ErrUnverifiedCopy) {
				t.Errorf("Promote: %v, want ErrUnverifiedCopy", err)
			}
			if headDigest(t, dst) != nil {
				t.Error("the tag was written")
			}
		})
	}
}

// TestPromoteImmutableSignatureTag: a destination that holds its tags
// immutable refuses to update a signature tag that promote merges into;
// promote says so, not "unsigned", and exits as for a tag refusal.
func TestPromoteImmutableSignatureTag(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	k, k2 := newKey(t), newKey(t)
	src, prod := regtest.New(t), regtest.New(t, regtest.WithMiddleware(regtest.ImmutableTags))
	srcRef := pushSigned(t, src, "ci/app:1", regtest.Must(regtest.MultiOSIndex())(t), &k, false)
	dst := tag(t, prod, "release/app:1.0")
	if _, err := gate(t, nil, k.path).Promote(ctx, srcRef, dst, PromoteOptions{}); err != nil {
		t.Fatalf("first promotion (new tags only): %v", err)
	}
	// A second signature at the source changes its .sig tags; promoting
	// again must update the destination's.
	if _, err := sign.Sign(ctx, srcRef, k2.sv, sign.Options{Recursive: true}); err != nil {
		t.Fatal(err)
	}
	_, err := gate(t, nil, k.path, k2.path).Promote(ctx, srcRef, dst, PromoteOptions{})
	if !errors.Is(err, ErrImmutableArtifactTag) || !errors.Is(err, registry.ErrTagExists) ||
		!strings.Contains(err.Error(), "configured as immutable") || strings.Contains(err.Error(), sign.RuleUnsigned) {
		t.Fatalf("Promote: %v, want ErrImmutableArtifactTag naming the registry's refusal", err)
	}

	// Without the referrers API, the second referrer of a subject copied
	// updates the fallback tag the first one wrote.
	fresh := pushSigned(t, src, "ci/fresh:1", regtest.Must(regtest.MultiOSIndex())(t), &k, false)
	subject := v1.Descriptor{MediaType: types.OCIImageIndex, Digest: regtest.Must(v1.NewHash(fresh.DigestStr()))(t), Size: loadSnapSize(t, fresh)}
	putBundle(t, fresh.Context(), subject, true, "ci")
	putBundle(t, fresh.Context(), subject, true, "release") // a second signer
	dst = tag(t, prod, "release/fresh:1.0")
	_, err = gate(t, nil, k.path).Promote(ctx, fresh, dst, PromoteOptions{})
	if !errors.Is(err, ErrImmutableArtifactTag) || !strings.Contains(err.Error(), ":sha256-"+subject.Digest.Hex+" ") {
		t.Fatalf("Promote: %v, want ErrImmutableArtifactTag naming the fallback tag", err)
	}
	if headDigest(t, dst) != nil {
		t.Error("the tag was written")
	}
}

// loadSnapSize returns the size of the manifest ref names.
func loadSnapSize(t *testing.T, ref name.Reference) int64 {
	t.Helper()
	d, err := remote.Head(ref)
	if err != nil {
		t.Fatal(err)
	}
	return d.Size
}
