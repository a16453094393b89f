package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/imgctl/imgctl/sign"
)

// benchSignOptions is how Setup signs: recursively, attestations
// included, in sign's default format (legacy .sig tags and bundles).
func benchSignOptions() sign.Options {
	return sign.Options{Recursive: true, Attestations: true, Format: sign.DefaultFormat}
}

// promoteIndex copies the index Source, with its signatures, attestations
// and referrers, to the tag Target; Key verifies the signatures.
type promoteIndex struct {
	Target, Source, Key, Policy string
}

func (promoteIndex) opName() string { return "promote" }

// promoteCase is the release step: a signed and attested 3-variant index
// copied to its release tag in another repository of the same registry.
type promoteCase struct {
	src     string // by digest
	key     string // public key path
	policy  string // policy file path: the index's Windows target
	digest  v1.Hash
	signed  []v1.Hash // the index and every child that carries signatures
	atts    []v1.Hash // attestation manifests of the index
	refs    map[v1.Hash]int
	sigTags int
}

// Finding names of the promote case.
const (
	findDigest    = "index digest"
	findSigTags   = ".sig tags"
	findReferrers = "referrers"
	findAttested  = "attestations"
)

func (*promoteCase) Name() string { return "promote-3" }
func (*promoteCase) Title() string {
	return "Promote a signed, attested 3-variant index to a release repository"
}

func (c *promoteCase) Describe() string {
	return fmt.Sprintf("The release step. `src/promote-3:1` is an index of %s, each image with a BuildKit-style "+
		"attestation manifest, signed recursively with one key by imgctl's sign package with its default format "+
		"(see Setup: %d signature tags and %d referrers in all, the referrers under the `sha256-<digest>` fallback tag "+
		"since this registry has no referrers API). Each tool copies it by digest to a fresh repository of the same "+
		"registry. Commands: `imgctl promote --policy policy.yaml --key cosign.pub SRC@digest TARGET` (the policy names the one target, ltsc2025) (verifies the signatures at the "+
		"source and again at the target); `crane copy SRC@digest TARGET`; `regctl image copy --referrers --digest-tags "+
		"SRC@digest TARGET`. After each run the target is checked: the same index digest, the signature tags and "+
		"referrers of every signed manifest, and the attestation manifests.",
		platformList(rebasePlatforms), c.sigTags, c.totalRefs())
}

func (c *promoteCase) totalRefs() int {
	n := 0
	for _, r := range c.refs {
		n += r
	}
	return n
}

func platformList(ps []platformSpec) string {
	var ss []string
	for _, p := range ps {
		ss = append(ss, "`"+p.String()+"`")
	}
	return strings.Join(ss, ", ")
}

// Setup pushes the index (apps on January's bases, as rebase-3), writes a
// key pair, signs the index recursively and records what a full copy has.
func (c *promoteCase) Setup(ctx context.Context, e *env) error {
	bases, err := benchBases(rebasePlatforms, rebaseWinOld, "jan")
	if err != nil {
		return err
	}
	_, idx, err := attestedApps(e, rebasePlatforms, bases, func(platformSpec) string { return e.reg.Host() + "/base/promote-3" })
	if err != nil {
		return err
	}
	tag, err := e.reg.Ref("src/promote-3:1")
	if err != nil {
		return err
	}
	if err := e.push(ctx, tag, idx); err != nil {
		return err
	}
	if c.digest, err = idx.Digest(); err != nil {
		return err
	}
	ref := tag.Context().Digest(c.digest.String())
	c.src = ref.String()
	signer, err := c.writeKey()
	if err != nil {
		return err
	}
	res, err := sign.Sign(ctx, ref, signer, benchSignOptions())
	if err != nil {
		return fmt.Errorf("signing %s: %w", ref, err)
	}
	c.signed = res.Digests
	im, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	c.atts = nil
	for _, d := range im.Manifests {
		if d.Platform != nil && d.Platform.OS == "unknown" {
			c.atts = append(c.atts, d.Digest)
		}
	}
	c.refs, c.sigTags, err = artifactsOf(ctx, tag.Context(), c.signed)
	return err
}

// writeKey writes a fresh key pair into a temporary directory and returns
// its signer; the public key's path is the one imgctl verifies with.
func (c *promoteCase) writeKey() (signature.SignerVerifier, error) {
	dir, err := os.MkdirTemp("", "imgctl-bench-key-")
	if err != nil {
		return nil, err
	}
	kp, err := sign.GenerateKeyPair(nil)
	if err != nil {
		return nil, err
	}
	priv, pub := filepath.Join(dir, "cosign.key"), filepath.Join(dir, "cosign.pub")
	if err := sign.WriteKeyPair(kp, priv, pub); err != nil {
		return nil, err
	}
	c.key, c.policy = pub, filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(c.policy, []byte("version: 1\ntargets: [ltsc2025]\n"), 0o644); err != nil {
		return nil, err
	}
	pem, err := os.ReadFile(priv)
	if err != nil {
		return nil, err
	}
	return sign.LoadPrivateKey(pem, nil)
}

// artifactsOf counts, in repo, the referrers of each digest (through the
// fallback tag this registry serves) and the digests with a .sig tag.
func artifactsOf(ctx context.Context, repo name.Repository, digests []v1.Hash) (map[v1.Hash]int, int, error) {
	refs, tags := map[v1.Hash]int{}, 0
	for _, d := range digests {
		idx, err := remote.Referrers(repo.Digest(d.String()), remote.WithContext(ctx))
		if err != nil {
			return nil, 0, fmt.Errorf("referrers of %s: %w", d, err)
		}
		im, err := idx.IndexManifest()
		if err != nil {
			return nil, 0, err
		}
		refs[d] = len(im.Manifests)
		if _, err := remote.Head(repo.Tag(fmt.Sprintf("%s-%s.sig", d.Algorithm, d.Hex)), remote.WithContext(ctx)); err == nil {
			tags++
		}
	}
	return refs, tags, nil
}

func (c *promoteCase) Op(target string) op {
	return promoteIndex{Source: c.src, Target: target, Key: c.key, Policy: c.policy}
}

// Check reads the target back: the digest, the signature tags and
// referrers of every signed manifest, and the attestation manifests.
func (c *promoteCase) Check(ctx context.Context, target string) ([]finding, error) {
	ref, err := name.ParseReference(target, name.Insecure)
	if err != nil {
		return nil, err
	}
	desc, err := remote.Head(ref, remote.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("reading result %s: %w", target, err)
	}
	refs, tags, err := artifactsOf(ctx, ref.Context(), c.signed)
	if err != nil {
		return nil, err
	}
	gotRefs, atts := 0, 0
	for d, n := range refs {
		gotRefs += min(n, c.refs[d])
	}
	for _, d := range c.atts {
		if _, err := remote.Head(ref.Context().Digest(d.String()), remote.WithContext(ctx)); err == nil {
			atts++
		}
	}
	return []finding{
		{findDigest, map[bool]string{true: "same", false: "**changed**"}[desc.Digest == c.digest], desc.Digest == c.digest},
		{findSigTags, ratio("copied", tags, c.sigTags), tags == c.sigTags},
		{findReferrers, ratio("copied", gotRefs, c.totalRefs()), gotRefs == c.totalRefs()},
		{findAttested, ratio("copied", atts, len(c.atts)), atts == len(c.atts)},
	}, nil
}
