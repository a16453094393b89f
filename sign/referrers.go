package sign

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/sigstore/cosign/v2/pkg/oci"
	"github.com/sigstore/cosign/v2/pkg/oci/empty"
	"github.com/sigstore/cosign/v2/pkg/oci/mutate"
)

// SignatureArtifactType is the artifact type (and config media type) of the
// referrers Sign writes, as cosign's OCI 1.1 mode names them.
const SignatureArtifactType = "application/vnd.dev.cosign.artifact.sig.v1+json"

// checkReferrers fails unless the registry serves the referrers API for
// ref's repository, so that Sign writes nothing it cannot finish.
func checkReferrers(ref name.Digest, opts []remote.Option) error {
	opts = append(opts[:len(opts):len(opts)], remote.WithReferrersTagFallback(false))
	if _, err := remote.Referrers(ref, opts...); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrReferrersUnsupported, ref.Context(), err)
	}
	return nil
}

// writeReferrer stores sig as a referrer of target: a manifest whose one
// layer is the signature and whose subject is target.
func writeReferrer(ctx context.Context, target name.Digest, se oci.SignedEntity, sig oci.Signature, opts []remote.Option) error {
	subject, err := describe(target, se, opts)
	if err != nil {
		return err
	}
	sigs, err := mutate.AppendSignatures(empty.Signatures(), false, sig)
	if err != nil {
		return fmt.Errorf("making referrer for %s: %w", target, err)
	}
	m, err := sigs.Manifest()
	if err != nil {
		return fmt.Errorf("making referrer for %s: %w", target, err)
	}
	cfg, err := sigs.RawConfigFile()
	if err != nil {
		return fmt.Errorf("making referrer for %s: %w", target, err)
	}
	m = m.DeepCopy()
	m.MediaType, m.ArtifactType = types.OCIManifestSchema1, SignatureArtifactType
	m.Config.MediaType = SignatureArtifactType
	m.Subject = subject
	raw, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("making referrer for %s: %w", target, err)
	}
	repo := target.Context()
	for _, l := range []v1.Layer{sig, static.NewLayer(cfg, SignatureArtifactType)} {
		if err := remote.WriteLayer(repo, l, opts...); err != nil {
			return fmt.Errorf("writing referrer blob for %s: %w", target, err)
		}
	}
	h, _, err := v1.SHA256(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	opts = append(opts[:len(opts):len(opts)], remote.WithReferrersTagFallback(false), remote.WithContext(ctx))
	if err := remote.Put(repo.Digest(h.String()), rawManifest{raw, types.OCIManifestSchema1}, opts...); err != nil {
		return fmt.Errorf("writing referrer for %s: %w", target, err)
	}
	return nil
}

// describe returns the descriptor of a signed manifest, asking the registry
// only when the entity cannot tell.
func describe(target name.Digest, se oci.SignedEntity, opts []remote.Option) (*v1.Descriptor, error) {
	if d, ok := se.(partial.Describable); ok {
		desc, err := partial.Descriptor(d)
		if err == nil {
			return &v1.Descriptor{MediaType: desc.MediaType, Digest: desc.Digest, Size: desc.Size}, nil
		}
	}
	desc, err := remote.Head(target, opts...)
	if err != nil {
		return nil, fmt.Errorf("describing %s: %w", target, err)
	}
	return &v1.Descriptor{MediaType: desc.MediaType, Digest: desc.Digest, Size: desc.Size}, nil
}

// rawManifest is a manifest PUT with its exact bytes.
type rawManifest struct {
	raw []byte
	mt  types.MediaType
}

func (r rawManifest) RawManifest() ([]byte, error)        { return r.raw, nil }
func (r rawManifest) MediaType() (types.MediaType, error) { return r.mt, nil }
