package sign

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	cosignremote "github.com/sigstore/cosign/v2/pkg/cosign/remote"
	"github.com/sigstore/cosign/v2/pkg/oci"
	"github.com/sigstore/cosign/v2/pkg/oci/mutate"
	ociremote "github.com/sigstore/cosign/v2/pkg/oci/remote"
	"github.com/sigstore/cosign/v2/pkg/oci/static"
	"github.com/sigstore/sigstore/pkg/signature"
	sigopts "github.com/sigstore/sigstore/pkg/signature/options"
	"github.com/sigstore/sigstore/pkg/signature/payload"

	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/snapshot"
)

// Options control Sign.
type Options struct {
	// Registry is the run's registry client; nil means registry.New().
	Registry *registry.Client
	// Format is where the signatures go; the zero value is FormatLegacy.
	Format Format
	// Recursive also signs every image of an index (and every nested
	// index and its images), but not its attestation manifests.
	Recursive bool
	// Attestations also signs every attestation manifest of the index
	// (BuildKit's, vnd.docker.reference.type=attestation-manifest), and
	// implies Recursive: with both, Sign signs what `cosign sign
	// --recursive` does.
	Attestations bool
	// Referrers also stores each legacy signature as an OCI 1.1 referrer
	// (cosign's --registry-referrers-mode=oci-1-1); it needs the
	// referrers API. Bundles are always referrers.
	Referrers bool
	// Annotations are added to the signed payload's "optional" section
	// (legacy) and to the statement's subject (bundle).
	Annotations map[string]any
	// Logger receives progress at debug level; nil discards.
	Logger *slog.Logger
}

// logger is Options.Logger, or one that discards.
func (o *Options) logger() *slog.Logger { return cmp.Or(o.Logger, slog.New(slog.DiscardHandler)) }

// Result is what Sign signed.
type Result struct {
	// Digests are the signed manifests: ref first, then its children.
	Digests []v1.Hash
}

// Sign signs the manifest ref names (an index or an image) with signer and
// stores the signature in ref's repository in o.Format, without any
// transparency log. With o.Recursive it signs every image of an index too,
// and with o.Attestations every attestation manifest. Signing an already
// signed manifest again with the same key adds nothing.
func Sign(ctx context.Context, ref name.Digest, signer signature.SignerVerifier, o Options) (*Result, error) {
	rc := registry.Or(o.Registry)
	o.Registry = rc
	rc.Scope(nil, []name.Repository{ref.Context()})
	ropts, err := rc.Remote(ctx, ref.Context())
	if err != nil {
		return nil, err
	}
	copts := []ociremote.Option{ociremote.WithRemoteOptions(ropts...), ociremote.WithTargetRepository(ref.Context())}
	if o.Referrers && o.Format.legacy() {
		if err := rc.CheckReferrers(ctx, ref); err != nil {
			return nil, err
		}
	}
	targets, err := walk(ctx, rc, ref, o.Recursive || o.Attestations, o.Attestations)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	for _, t := range targets {
		if err := signOne(ctx, ref.Context(), t, signer, o, copts); err != nil {
			return res, err
		}
		res.Digests = append(res.Digests, t.Digest)
	}
	return res, nil
}

// walk lists what Sign signs: ref, then, when recursive, every child of an
// index in order (attestation manifests only with attestations), nested
// indexes walked in turn.
func walk(ctx context.Context, rc *registry.Client, ref name.Digest, recursive, attestations bool) ([]v1.Descriptor, error) {
	desc, err := rc.Get(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", ref, err)
	}
	out := []v1.Descriptor{{MediaType: desc.MediaType, Digest: desc.Digest, Size: desc.Size}}
	if !recursive || !desc.MediaType.IsIndex() {
		return out, nil
	}
	im, err := v1.ParseIndexManifest(bytes.NewReader(desc.Manifest))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", ref, err)
	}
	for _, c := range im.Manifests {
		switch {
		case snapshot.IsAttestation(c) && !attestations:
		case c.MediaType.IsIndex():
			sub, err := walk(ctx, rc, ref.Context().Digest(c.Digest.String()), recursive, attestations)
			if err != nil {
				return nil, err
			}
			out = append(out, sub...)
		default:
			out = append(out, v1.Descriptor{MediaType: c.MediaType, Digest: c.Digest, Size: c.Size})
		}
	}
	return out, nil
}

// signOne signs one manifest of repo and writes the signature in each
// format asked for.
func signOne(ctx context.Context, repo name.Repository, desc v1.Descriptor, signer signature.SignerVerifier, o Options, copts []ociremote.Option) error {
	target := repo.Digest(desc.Digest.String())
	if o.Format.legacy() {
		if err := signLegacy(ctx, target, desc, signer, o, copts); err != nil {
			return err
		}
	}
	if o.Format.bundle() {
		if err := signBundle(ctx, target, desc, signer, o); err != nil {
			return err
		}
	}
	o.logger().Debug("signed", "digest", desc.Digest.String(), "format", string(o.Format))
	return nil
}

// signLegacy appends a cosign v2 signature of target to its .sig tag (and,
// with o.Referrers, stores it as a referrer), unless the tag holds one by
// the same key already.
func signLegacy(ctx context.Context, target name.Digest, desc v1.Descriptor, signer signature.SignerVerifier, o Options, copts []ociremote.Option) error {
	sig, err := newSignature(ctx, target, signer, o.Annotations)
	if err != nil {
		return err
	}
	// SignedUnknown reads only the .sig tag: the manifest is read already.
	se := ociremote.SignedUnknown(target, copts...)
	signed, err := mutate.AttachSignatureToEntity(se, sig, mutate.WithDupeDetector(cosignremote.NewDupeDetector(signer)))
	if err != nil {
		return fmt.Errorf("attaching signature to %s: %w", target, err)
	}
	if err := ociremote.WriteSignatures(target.Context(), signed, copts...); err != nil {
		return fmt.Errorf("writing signature of %s: %w", target, immutableHint(err))
	}
	if o.Referrers {
		return writeReferrer(ctx, o.Registry, target, desc, sig)
	}
	return nil
}

// signBundle writes a bundle signature of target unless one by the same
// key is there already.
func signBundle(ctx context.Context, target name.Digest, desc v1.Descriptor, signer signature.SignerVerifier, o Options) error {
	have, _, err := readBundles(ctx, o.Registry, target)
	if err != nil {
		return fmt.Errorf("reading the bundles of %s: %w", target, err)
	}
	self := Key{Name: "the signing key", Verifier: signer}
	for _, b := range have {
		if verifyBundle(b, desc.Digest, self) == nil {
			return nil
		}
	}
	b, err := newBundle(ctx, target, signer, o.Annotations)
	if err != nil {
		return err
	}
	return writeBundle(ctx, o.Registry, target, desc, b)
}

// newSignature signs cosign's simple-signing payload for target: the
// payload names the repository and the exact digest.
func newSignature(ctx context.Context, target name.Digest, signer signature.Signer, ann map[string]any) (oci.Signature, error) {
	pl, err := (&payload.Cosign{Image: target, Annotations: ann}).MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("making payload for %s: %w", target, err)
	}
	raw, err := signer.SignMessage(bytes.NewReader(pl), sigopts.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("signing %s: %w", target, err)
	}
	sig, err := static.NewSignature(pl, base64.StdEncoding.EncodeToString(raw))
	if err != nil {
		return nil, fmt.Errorf("making signature for %s: %w", target, err)
	}
	return sig, nil
}
