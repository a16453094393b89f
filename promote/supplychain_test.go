package promote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/imgctl/imgctl/internal/testing/gatetest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/internal/testing/signtest"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/sign"
)

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
			k := signtest.NewKey(t)
			src, prod := regtest.New(t, tc.opts...), regtest.New(t, tc.opts...)
			srcRef := gatetest.PushSigned(t, src, "ci/app:1", regtest.Must(regtest.SupplyChainIndex(true))(t), k.Signer, tc.referrers)
			s := gatetest.LoadSnap(t, srcRef) // signed recursively: the attestation manifests too
			var bundles []v1.Hash
			for _, e := range s.Entries {
				if e.IsAttestation() {
					bundles = append(bundles, putBundle(t, srcRef.Context(), e.Descriptor, !tc.referrers, "ci"))
				}
			}
			dst := tag(t, prod, "release/app:1.0")
			g := chainGate(t, gatetest.ChainPolicy, "", k.PublicPath)
			pr, err := Run(ctx, g, srcRef.Context().Tag("1"), dst, Options{})
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
			if rep, _ := check(t, chainGate(t, gatetest.ChainPolicy, "", k.PublicPath), dst); !rep.Passed {
				t.Errorf("the gate at the destination: %v", gatetest.ErrorRules(rep))
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
	k := signtest.NewKey(t)
	src, prod := regtest.New(t), regtest.New(t)
	srcRef := gatetest.PushSigned(t, src, "ci/app:1", regtest.Must(regtest.SupplyChainIndex(true))(t), k.Signer, false)
	counts := map[string][2]int{}
	for _, doc := range []string{"targets: [ltsc2025]\n", gatetest.ChainPolicy} {
		src.ResetStats()
		prod.ResetStats()
		g := chainGate(t, doc, "", k.PublicPath)
		if _, err := Run(ctx, g, srcRef, tag(t, prod, fmt.Sprintf("release/app%d:1", len(counts))), Options{}); err != nil {
			t.Fatal(err)
		}
		counts[doc] = [2]int{src.Stats().Total(), prod.Stats().Total()}
	}
	plain, chain := counts["targets: [ltsc2025]\n"], counts[gatetest.ChainPolicy]
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
	k := signtest.NewKey(t)
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
		if _, err := sign.Sign(ctx, x.ref, k.Signer, sign.Options{}); err != nil {
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
			srcRef := gatetest.PushSigned(t, src, "ci/rebased2:"+strings.ReplaceAll(tc.name, " ", "-"), idx, k.Signer, false)
			dst := tag(t, prod, "release/app:"+strings.ReplaceAll(tc.name, " ", "-"))
			pr, err := Run(ctx, gate(t, parse(t, gatetest.ChainPolicy, ""), k.PublicPath), srcRef, dst, Options{})
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
	k := signtest.NewKey(t)
	src := regtest.New(t)
	srcRef := gatetest.PushSigned(t, src, "ci/app:1", regtest.Must(regtest.SupplyChainIndex(true))(t), k.Signer, false)
	s := gatetest.LoadSnap(t, srcRef)
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
			_, err := Run(ctx, chainGate(t, gatetest.ChainPolicy, "", k.PublicPath), srcRef, dst, Options{})
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
	k, k2 := signtest.NewKey(t), signtest.NewKey(t)
	src, prod := regtest.New(t), regtest.New(t, regtest.WithMiddleware(regtest.ImmutableTags))
	srcRef := gatetest.PushSigned(t, src, "ci/app:1", regtest.Must(regtest.MultiOSIndex())(t), k.Signer, false)
	dst := tag(t, prod, "release/app:1.0")
	if _, err := Run(ctx, gate(t, nil, k.PublicPath), srcRef, dst, Options{}); err != nil {
		t.Fatalf("first promotion (new tags only): %v", err)
	}
	// A second signature at the source changes its .sig tags; promoting
	// again must update the destination's.
	if _, err := sign.Sign(ctx, srcRef, k2.Signer, sign.Options{Recursive: true}); err != nil {
		t.Fatal(err)
	}
	_, err := Run(ctx, gate(t, nil, k.PublicPath, k2.PublicPath), srcRef, dst, Options{})
	if !errors.Is(err, ErrImmutableArtifactTag) || !errors.Is(err, registry.ErrTagExists) ||
		!strings.Contains(err.Error(), "configured as immutable") || strings.Contains(err.Error(), sign.RuleUnsigned) {
		t.Fatalf("Promote: %v, want ErrImmutableArtifactTag naming the registry's refusal", err)
	}

	// Without the referrers API, the second referrer of a subject copied
	// updates the fallback tag the first one wrote.
	fresh := gatetest.PushSigned(t, src, "ci/fresh:1", regtest.Must(regtest.MultiOSIndex())(t), k.Signer, false)
	subject := v1.Descriptor{MediaType: types.OCIImageIndex, Digest: regtest.Must(v1.NewHash(fresh.DigestStr()))(t), Size: loadSnapSize(t, fresh)}
	putBundle(t, fresh.Context(), subject, true, "ci")
	putBundle(t, fresh.Context(), subject, true, "release") // a second signer
	dst = tag(t, prod, "release/fresh:1.0")
	_, err = Run(ctx, gate(t, nil, k.PublicPath), fresh, dst, Options{})
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
