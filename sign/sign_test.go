package sign

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/cosign/v2/pkg/oci/empty"
	"github.com/sigstore/cosign/v2/pkg/oci/mutate"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/snapshot"
)

func TestSignRecursiveVerify(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	reg := regtest.New(t)
	a, b := testKeys(t)
	ref := pushIndex(t, reg, "app:1")

	if fs := verifyRef(t, ref, pubKey(t, a)); len(fs) != 5 {
		t.Fatalf("unsigned index: %d findings, want 5 (index and 4 images, attestations skipped): %v", len(fs), fs)
	} else if fs[0].Rule != RuleUnsigned {
		t.Fatalf("unsigned index: rule %s", fs[0].Rule)
	}

	// Recursive signs the index and its images, not the attestations.
	res, err := Sign(ctx, ref, signer(t, a), Options{Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	var images []string
	for _, c := range children(t, ref) {
		if c.Annotations[snapshot.AnnotationReferenceType] != snapshot.AttestationManifest {
			images = append(images, c.Digest.String())
		}
	}
	if got := hashStrings(res.Digests); len(images) != 4 || !slices.Equal(got, append([]string{ref.DigestStr()}, images...)) {
		t.Fatalf("signed %v, want the index first and its 4 images %v", got, images)
	}
	if fs := verifyRef(t, ref, pubKey(t, a)); len(fs) != 0 {
		t.Fatalf("signed index: %v", fs)
	}
	// Attestations adds the attestation manifests; signing again adds no
	// second signature.
	res, err = Sign(ctx, ref, signer(t, a), Options{Attestations: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{ref.DigestStr()}
	for _, c := range children(t, ref) {
		want = append(want, c.Digest.String())
	}
	if got := hashStrings(res.Digests); !slices.Equal(got, want) {
		t.Fatalf("signed with attestations %v, want the index and its 8 children %v", got, want)
	}
	img, err := remote.Image(registry.SignatureTag(ref.Context(), children(t, ref)[0].Digest, "sig"))
	if err != nil {
		t.Fatal(err)
	}
	if ls, _ := img.Layers(); len(ls) != 1 {
		t.Fatalf("re-signing left %d signatures, want 1", len(ls))
	}
	att := registry.SignatureTag(ref.Context(), children(t, ref)[len(images)].Digest, "sig")
	if _, err := remote.Head(att); err != nil {
		t.Fatalf("the attestation manifest was not signed: %v", err)
	}
	// Every key must verify.
	fs := verifyRef(t, ref, pubKey(t, a), pubKey(t, b))
	if len(fs) != 5 || fs[0].Rule != RuleBadSignature {
		t.Fatalf("second key: %v", fs)
	}
}

func TestSignNotRecursive(t *testing.T) {
	t.Parallel()
	reg := regtest.New(t)
	a, _ := testKeys(t)
	ref := pushIndex(t, reg, "app:1")
	if _, err := Sign(context.Background(), ref, signer(t, a), Options{}); err != nil {
		t.Fatal(err)
	}
	got := rules(verifyRef(t, ref, pubKey(t, a)))
	if _, ok := got[ref.DigestStr()]; ok || len(got) != 4 {
		t.Fatalf("findings %v, want the 4 images unsigned and the index signed", got)
	}
	for d, r := range got {
		if r != RuleUnsigned {
			t.Errorf("%s: %s, want %s", d, r, RuleUnsigned)
		}
	}
}

// TestTamper signs recursively, then replaces the signature of one child
// with a valid signature of other content, and another child's with a
// signature by another key.
func TestTamper(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	reg := regtest.New(t)
	a, b := testKeys(t)
	ref := signedIndex(t, reg, "app:1", a, Options{})
	ms := children(t, ref)
	repo := ref.Context()
	replace := func(child int, about int, kp *testKey) {
		sig, err := newSignature(ctx, repo.Digest(ms[about].Digest.String()), signer(t, kp), nil)
		if err != nil {
			t.Fatal(err)
		}
		sigs, err := mutate.AppendSignatures(empty.Signatures(), false, sig)
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.Write(registry.SignatureTag(repo, ms[child].Digest, "sig"), sigs); err != nil {
			t.Fatal(err)
		}
	}
	replace(1, 0, a) // child 1 carries key a's signature of child 0
	replace(2, 2, b) // child 2 is signed by key b only
	got := rules(verifyRef(t, ref, pubKey(t, a)))
	want := map[string]string{ms[1].Digest.String(): RuleBadSignature, ms[2].Digest.String(): RuleBadSignature}
	if len(got) != len(want) || got[ms[1].Digest.String()] != RuleBadSignature || got[ms[2].Digest.String()] != RuleBadSignature {
		t.Fatalf("findings %v, want %v", got, want)
	}
}
