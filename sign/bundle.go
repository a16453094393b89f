package sign

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	intotov1 "github.com/in-toto/attestation/go/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	sgbundle "github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	sgsign "github.com/sigstore/sigstore-go/pkg/sign"
	sgverify "github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	sigopts "github.com/sigstore/sigstore/pkg/signature/options"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/imgctl/imgctl/registry"
)

// Names of the Sigstore bundle signature cosign v3 writes by default.
const (
	// BundleArtifactType is the artifact type of the referrer (and the
	// media type of its one layer) holding a Sigstore bundle v0.3.
	BundleArtifactType = "application/vnd.dev.sigstore.bundle.v0.3+json"
	// CosignSignPredicateType is the predicate type of the in-toto
	// statement a bundle signature signs.
	CosignSignPredicateType = "https://sigstore.dev/cosign/sign/v1"
	// AnnotationBundlePredicateType is the referrer annotation that names
	// the bundle's predicate type, so that a reader can tell a signature
	// from an attestation without fetching the bundle.
	AnnotationBundlePredicateType = "dev.sigstore.bundle.predicateType"
	// AnnotationBundleContent says what the bundle holds ("dsse-envelope").
	AnnotationBundleContent = "dev.sigstore.bundle.content"

	inTotoPayloadType = "application/vnd.in-toto+json"
	emptyMediaType    = "application/vnd.oci.empty.v1+json"
	bundleTypePrefix  = "application/vnd.dev.sigstore.bundle"
)

// newBundle signs target the way `cosign sign --key` of cosign v3 does with
// no transparency log and no timestamp authority: a DSSE envelope around an
// in-toto statement (predicate CosignSignPredicateType, subject the
// manifest digest, the annotations on the subject), made into a Sigstore
// bundle v0.3 by sigstore-go, whose verification material is the public
// key's hint. It returns the bundle's JSON.
func newBundle(ctx context.Context, target name.Digest, signer signature.SignerVerifier, ann map[string]any) ([]byte, error) {
	h, err := v1.NewHash(target.DigestStr())
	if err != nil {
		return nil, err
	}
	subject := &intotov1.ResourceDescriptor{Digest: map[string]string{h.Algorithm: h.Hex}}
	if len(ann) > 0 {
		if subject.Annotations, err = structpb.NewStruct(ann); err != nil {
			return nil, fmt.Errorf("annotations of %s: %w", target, err)
		}
	}
	payload, err := protojson.Marshal(&intotov1.Statement{
		Type:          intotov1.StatementTypeUri,
		Subject:       []*intotov1.ResourceDescriptor{subject},
		PredicateType: CosignSignPredicateType,
		Predicate:     &structpb.Struct{},
	})
	if err != nil {
		return nil, fmt.Errorf("making statement for %s: %w", target, err)
	}
	kp, err := newKeypair(signer)
	if err != nil {
		return nil, err
	}
	b, err := sgsign.Bundle(&sgsign.DSSEData{Data: payload, PayloadType: inTotoPayloadType}, kp, sgsign.BundleOptions{Context: ctx})
	if err != nil {
		return nil, fmt.Errorf("signing %s: %w", target, err)
	}
	raw, err := protojson.Marshal(b)
	if err != nil {
		return nil, fmt.Errorf("signing %s: %w", target, err)
	}
	return raw, nil
}

// keypair is a signature.SignerVerifier as sigstore-go's sign.Keypair.
// cosign v3 has the same adapter (SignerVerifierKeypair), but in an
// internal package; this is it, for the keys LoadPrivateKey returns.
type keypair struct {
	sv     signature.SignerVerifier
	pub    crypto.PublicKey
	hint   []byte
	keyAlg string
	alg    signature.AlgorithmDetails
}

func newKeypair(sv signature.SignerVerifier) (*keypair, error) {
	pub, err := sv.PublicKey()
	if err != nil {
		return nil, fmt.Errorf("reading the public key: %w", err)
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("reading the public key: %w", err)
	}
	sum := sha256.Sum256(der)
	kp := &keypair{sv: sv, pub: pub, hint: []byte(base64.StdEncoding.EncodeToString(sum[:]))}
	switch pub.(type) {
	case *ecdsa.PublicKey:
		kp.keyAlg = "ECDSA"
	case *rsa.PublicKey:
		kp.keyAlg = "RSA"
	case ed25519.PublicKey:
		kp.keyAlg = "ED25519"
	default:
		return nil, fmt.Errorf("%w: unsupported key type %T", ErrInvalidKey, pub)
	}
	if kp.alg, err = signature.GetDefaultAlgorithmDetails(pub); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidKey, err)
	}
	return kp, nil
}

func (k *keypair) GetHashAlgorithm() protocommon.HashAlgorithm { return k.alg.GetProtoHashType() }
func (k *keypair) GetSigningAlgorithm() protocommon.PublicKeyDetails {
	return k.alg.GetSignatureAlgorithm()
}
func (k *keypair) GetHint() []byte                { return k.hint }
func (k *keypair) GetKeyAlgorithm() string        { return k.keyAlg }
func (k *keypair) GetPublicKey() crypto.PublicKey { return k.pub }
func (k *keypair) GetPublicKeyPem() (string, error) {
	b, err := cryptoutils.MarshalPublicKeyToPEM(k.pub)
	return string(b), err
}

// SignData signs data, hashed with the key's hash unless it signs data
// itself (Ed25519), and returns the signature and what was signed.
func (k *keypair) SignData(ctx context.Context, data []byte) ([]byte, []byte, error) {
	opts := []signature.SignOption{sigopts.WithContext(ctx)}
	signed := data
	if hf := k.alg.GetHashType(); hf != crypto.Hash(0) {
		h := hf.New()
		h.Write(data)
		signed = h.Sum(nil)
		opts = append(opts, sigopts.WithDigest(signed))
	}
	sig, err := k.sv.SignMessage(bytes.NewReader(data), opts...)
	return sig, signed, err
}

// writeBundle stores bundle as a referrer of subject in its repository, in
// cosign v3's layout: an OCI manifest with artifactType
// BundleArtifactType, the empty config, the bundle as its one layer and
// subject as its subject. On a registry without the referrers API the
// referrers tag fallback is updated too (registry.Client.PutReferrer), as
// cosign does.
//
// The manifest is built here rather than with cosign v3's
// ociremote.WriteAttestationNewBundleFormat, whose implicit fallback-tag
// write bypasses imgctl's counted PutReferrer.
func writeBundle(ctx context.Context, rc *registry.Client, subject name.Digest, desc v1.Descriptor, bundle []byte) error {
	layer := static.NewLayer(bundle, BundleArtifactType)
	config := static.NewLayer([]byte("{}"), emptyMediaType)
	cp := rc.Copier(subject.Context())
	var descs []v1.Descriptor
	for _, l := range []v1.Layer{config, layer} {
		if err := cp.Upload(ctx, l); err != nil {
			return fmt.Errorf("writing the bundle of %s: %w", subject, err)
		}
		d, err := l.Digest()
		if err != nil {
			return err
		}
		mt, _ := l.MediaType()
		sz, _ := l.Size()
		descs = append(descs, v1.Descriptor{MediaType: mt, Digest: d, Size: sz})
	}
	descs[0].ArtifactType = BundleArtifactType // as cosign v3 writes it
	m := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		ArtifactType:  BundleArtifactType,
		Config:        descs[0],
		Layers:        descs[1:],
		Subject:       &v1.Descriptor{MediaType: desc.MediaType, Digest: desc.Digest, Size: desc.Size},
		Annotations: map[string]string{
			"org.opencontainers.image.created": time.Now().UTC().Format(time.RFC3339),
			AnnotationBundleContent:            "dsse-envelope",
			AnnotationBundlePredicateType:      CosignSignPredicateType,
		},
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("writing the bundle of %s: %w", subject, err)
	}
	if err := rc.PutReferrer(ctx, subject.Context(), registry.RawManifest{Raw: raw, Type: types.OCIManifestSchema1}, true); err != nil {
		return fmt.Errorf("writing the bundle of %s: %w", subject, immutableHint(err))
	}
	return nil
}

// readBundles reads the Sigstore bundle signatures of subject: its
// referrers (one read, see registry.Client.Referrers) whose artifact type
// is a Sigstore bundle (or that carry cosign's predicate type annotation)
// and whose predicate type, when the referrer names it, is
// CosignSignPredicateType; then each one's manifest and bundle. A
// registry error is returned; a referrer that is not a readable bundle is
// returned in bad, to be judged.
func readBundles(ctx context.Context, rc *registry.Client, subject name.Digest) (bundles []*sgbundle.Bundle, bad []error, err error) {
	refs, err := rc.Referrers(ctx, subject, "")
	if err != nil {
		return nil, nil, err
	}
	for _, r := range refs {
		// A registry that reports a referrer's config media type as its
		// artifactType (an early draft of the spec) still passes cosign's
		// annotation through.
		pt, named := r.Annotations[AnnotationBundlePredicateType]
		if !strings.HasPrefix(r.ArtifactType, bundleTypePrefix) && !named {
			continue
		}
		if named && pt != CosignSignPredicateType {
			continue // an attestation, not a signature
		}
		b, err := readBundle(ctx, rc, subject.Context().Digest(r.Digest.String()))
		if registry.IsRegistryError(err) {
			return nil, nil, err
		}
		if err != nil {
			bad = append(bad, err)
			continue
		}
		bundles = append(bundles, b)
	}
	return bundles, bad, nil
}

// readBundle reads the bundle of one referrer manifest.
func readBundle(ctx context.Context, rc *registry.Client, ref name.Digest) (*sgbundle.Bundle, error) {
	desc, err := rc.Get(ctx, ref)
	if err != nil {
		return nil, err
	}
	m, err := v1.ParseManifest(bytes.NewReader(desc.Manifest))
	if err != nil {
		return nil, fmt.Errorf("bundle referrer %s: %w", ref, err)
	}
	for _, l := range m.Layers {
		if !strings.HasPrefix(string(l.MediaType), bundleTypePrefix) {
			continue
		}
		raw, err := rc.SmallBlob(ctx, ref.Context().Digest(l.Digest.String()))
		if err != nil {
			return nil, err
		}
		var b sgbundle.Bundle
		if err := b.UnmarshalJSON(raw); err != nil {
			return nil, fmt.Errorf("bundle referrer %s: %w", ref, err)
		}
		return &b, nil
	}
	return nil, fmt.Errorf("bundle referrer %s has no bundle layer", ref)
}

// verifyBundle checks b with key k, offline, as cosign v3's `verify --key
// --insecure-ignore-tlog` does through sigstore-go: the DSSE signature
// verifies with the key, no transparency log entry or timestamp is asked
// for, the statement's subject names digest and its predicate type is
// CosignSignPredicateType.
func verifyBundle(b *sgbundle.Bundle, digest v1.Hash, k Key) error {
	key := root.NewExpiringKey(k.Verifier, time.Time{}, time.Time{})
	tm := root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) { return key, nil })
	v, err := sgverify.NewVerifier(tm, sgverify.WithNoObserverTimestamps())
	if err != nil {
		return err
	}
	want, err := hex.DecodeString(digest.Hex)
	if err != nil {
		return err
	}
	res, err := v.Verify(b, sgverify.NewPolicy(sgverify.WithArtifactDigest(digest.Algorithm, want), sgverify.WithKey()))
	if err != nil {
		return err
	}
	if res.Statement == nil || res.Statement.GetPredicateType() != CosignSignPredicateType {
		return errors.New("the bundle is not a cosign signature (predicate type " + res.Statement.GetPredicateType() + ")")
	}
	return nil
}
