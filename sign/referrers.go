package sign

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/imgctl/imgctl/registry"
	"github.com/sigstore/cosign/v2/pkg/oci"
	"github.com/sigstore/cosign/v2/pkg/oci/empty"
	"github.com/sigstore/cosign/v2/pkg/oci/mutate"
)

// SignatureArtifactType is the artifact type (and config media type) of the
// referrers Sign writes, as cosign's OCI 1.1 mode names them.
const SignatureArtifactType = "application/vnd.dev.cosign.artifact.sig.v1+json"

// writeReferrer stores sig as a referrer of target: a manifest whose one
// layer is the signature and whose subject is target.
func writeReferrer(ctx context.Context, rc *registry.Client, target name.Digest, desc v1.Descriptor, sig oci.Signature) error {
	subject := &v1.Descriptor{MediaType: desc.MediaType, Digest: desc.Digest, Size: desc.Size}
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
	cp := rc.Copier(repo)
	for _, l := range []v1.Layer{sig, static.NewLayer(cfg, SignatureArtifactType)} {
		if err := cp.Upload(ctx, l); err != nil {
			return fmt.Errorf("writing referrer blob for %s: %w", target, err)
		}
	}
	// Sign checked the referrers API first: no fallback tag is written.
	if err := rc.PutReferrer(ctx, repo, registry.RawManifest{Raw: raw, Type: types.OCIManifestSchema1}, false); err != nil {
		return fmt.Errorf("writing referrer for %s: %w", target, err)
	}
	return nil
}
