package sign

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/imgctl/imgctl/registry"
	cosignremote "github.com/sigstore/cosign/v2/pkg/cosign/remote"
	"github.com/sigstore/cosign/v2/pkg/oci"
	"github.com/sigstore/cosign/v2/pkg/oci/mutate"
	ociremote "github.com/sigstore/cosign/v2/pkg/oci/remote"
	"github.com/sigstore/cosign/v2/pkg/oci/static"
	"github.com/sigstore/cosign/v2/pkg/oci/walk"
	"github.com/sigstore/sigstore/pkg/signature"
	sigopts "github.com/sigstore/sigstore/pkg/signature/options"
	"github.com/sigstore/sigstore/pkg/signature/payload"
)

// Options control Sign.
type Options struct {
	// Registry is the run's registry client; nil means registry.New().
	Registry *registry.Client
	// Recursive also signs every child manifest of an index, attestation
	// manifests included, as `cosign sign --recursive` does.
	Recursive bool
	// Referrers also stores each signature as an OCI 1.1 referrer.
	Referrers bool
	// Annotations are added to the signed payload's "optional" section.
	Annotations map[string]any
	// Logger receives progress at debug level; nil discards.
	Logger *slog.Logger
}

func (o *Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o.Logger
}

// Result is what Sign signed.
type Result struct {
	// Digests are the signed manifests: ref first, then its children.
	Digests []v1.Hash
}

// Sign signs the manifest ref names (an index or an image) with signer and
// stores the signature in ref's repository, without any transparency log.
// With o.Recursive it signs every child too. Signing an already signed
// manifest again with the same key adds nothing.
func Sign(ctx context.Context, ref name.Digest, signer signature.SignerVerifier, o Options) (*Result, error) {
	rc := registry.Or(o.Registry)
	o.Registry = rc
	rc.Scope(nil, []name.Repository{ref.Context()})
	ropts, err := rc.Remote(ctx, ref.Context())
	if err != nil {
		return nil, err
	}
	copts := []ociremote.Option{ociremote.WithRemoteOptions(ropts...), ociremote.WithTargetRepository(ref.Context())}
	if o.Referrers {
		if err := rc.CheckReferrers(ctx, ref); err != nil {
			return nil, err
		}
	}
	se, err := ociremote.SignedEntity(ref, copts...)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", ref, err)
	}
	res := &Result{}
	one := func(ctx context.Context, e oci.SignedEntity) error {
		d, err := signOne(ctx, ref.Context(), e, signer, o, copts)
		if err != nil {
			return err
		}
		res.Digests = append(res.Digests, d)
		return nil
	}
	if o.Recursive {
		err = walk.SignedEntity(ctx, se, one)
	} else {
		err = one(ctx, se)
	}
	if err != nil {
		return res, err
	}
	return res, nil
}

// signOne signs one manifest of repo and writes the signature.
func signOne(ctx context.Context, repo name.Repository, se oci.SignedEntity, signer signature.SignerVerifier, o Options, copts []ociremote.Option) (v1.Hash, error) {
	d, err := se.Digest()
	if err != nil {
		return v1.Hash{}, fmt.Errorf("reading digest: %w", err)
	}
	target := repo.Digest(d.String())
	sig, err := newSignature(ctx, target, signer, o.Annotations)
	if err != nil {
		return d, err
	}
	signed, err := mutate.AttachSignatureToEntity(se, sig, mutate.WithDupeDetector(cosignremote.NewDupeDetector(signer)))
	if err != nil {
		return d, fmt.Errorf("attaching signature to %s: %w", target, err)
	}
	if err := ociremote.WriteSignatures(repo, signed, copts...); err != nil {
		return d, fmt.Errorf("writing signature of %s: %w", target, err)
	}
	o.logger().Debug("signed", "digest", d.String())
	if o.Referrers {
		if err := writeReferrer(ctx, o.Registry, target, se, sig); err != nil {
			return d, err
		}
	}
	return d, nil
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
