package sign

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/imgctl/imgctl/registry"
	"github.com/sigstore/cosign/v2/pkg/oci"
	"github.com/sigstore/cosign/v2/pkg/oci/mutate"
	ociremote "github.com/sigstore/cosign/v2/pkg/oci/remote"
)

// Merge returns the registry.MergeFunc that copies cosign signature tags:
// it appends to the tag to the signatures of from that it lacks, and
// reports whether it wrote, as cosign does when it signs. A signature is
// the same when its payload digest and base64 signature are.
func Merge(rc *registry.Client) registry.MergeFunc {
	return func(ctx context.Context, from, to name.Tag) (bool, error) { return merge(ctx, rc, from, to) }
}

func merge(ctx context.Context, rc *registry.Client, from, to name.Tag) (bool, error) {
	read := func(t name.Tag) ([]oci.Signature, oci.Signatures, error) {
		ropts, err := rc.Remote(ctx, t.Context())
		if err != nil {
			return nil, nil, err
		}
		sigs, err := ociremote.Signatures(t, ociremote.WithRemoteOptions(ropts...))
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", t, err)
		}
		list, err := sigs.Get()
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", t, err)
		}
		return list, sigs, nil
	}
	srcList, _, err := read(from)
	if err != nil {
		return false, err
	}
	dstList, dstSigs, err := read(to)
	if err != nil {
		return false, err
	}
	have := map[string]bool{}
	for _, s := range dstList {
		k, err := sigKey(s)
		if err != nil {
			return false, fmt.Errorf("reading %s: %w", to, err)
		}
		have[k] = true
	}
	var add []oci.Signature
	for _, s := range srcList {
		k, err := sigKey(s)
		if err != nil {
			return false, fmt.Errorf("reading %s: %w", from, err)
		}
		if !have[k] {
			have[k] = true
			add = append(add, s)
		}
	}
	if len(add) == 0 {
		return false, nil
	}
	merged, err := mutate.AppendSignatures(dstSigs, false, add...)
	if err != nil {
		return false, fmt.Errorf("merging %s into %s: %w", from, to, err)
	}
	if err := rc.WriteImage(ctx, to, merged); err != nil {
		return false, fmt.Errorf("writing %s: %w", to, immutableHint(err))
	}
	rc.Logger().Debug("merged cosign tag", "from", from.String(), "to", to.String(), "added", len(add))
	return true, nil
}

func sigKey(s oci.Signature) (string, error) {
	d, err := s.Digest()
	if err != nil {
		return "", err
	}
	b64, err := s.Base64Signature()
	if err != nil {
		return "", err
	}
	return d.String() + " " + b64, nil
}
