package sign

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/cosign/v2/pkg/cosign"
	"github.com/sigstore/cosign/v2/pkg/oci"
	ociremote "github.com/sigstore/cosign/v2/pkg/oci/remote"
	"github.com/sigstore/cosign/v2/pkg/oci/static"
	sgbundle "github.com/sigstore/sigstore-go/pkg/bundle"
	"golang.org/x/sync/errgroup"

	"github.com/imgctl/imgctl/findings"
	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/snapshot"
)

// VerifyOptions control Verify.
type VerifyOptions struct {
	// Registry is the run's registry client; nil means registry.New().
	Registry *registry.Client
	// Concurrency bounds concurrent checks; 0 means
	// snapshot.DefaultConcurrency.
	Concurrency int
}

// Subject is a manifest whose signatures are checked.
type Subject struct {
	Digest   v1.Hash
	Platform *v1.Platform
}

// Subjects lists what Verify checks in a snapshot: the index (or image)
// itself, then every child that is not an attestation manifest.
func Subjects(s *snapshot.Snapshot) []Subject {
	out := []Subject{{Digest: s.Digest}}
	if s.Index == nil {
		return out
	}
	for _, e := range s.Entries {
		if !e.IsAttestation() {
			out = append(out, Subject{Digest: e.Descriptor.Digest, Platform: e.Descriptor.Platform})
		}
	}
	return out
}

// Verify checks that every subject in repo carries a signature that each
// key verifies, and returns a finding of error severity for each subject and
// key that fails: RuleUnsigned when the subject has no signature,
// RuleBadSignature when it has signatures but none verifies with the key
// (or they cannot be parsed). It returns no findings when keys is empty.
//
// It reads every store cosign writes to, offline, with no TUF root and no
// Rekor: the legacy sha256-<hex>.sig tag (cosign v2, and imgctl sign
// --format legacy), and the Sigstore bundles stored as referrers of the
// subject (cosign v3, and imgctl sign --format bundle), read through the
// referrers API or, on a registry without it, the sha256-<hex> referrers
// tag fallback. A subject is signed by a key when any store holds a
// signature that verifies with it. Each subject's stores are read once,
// whatever the number of keys: the .sig tag first, then, only when some
// key has no legacy signature that verifies, its referrers (one read) and
// the bundles among them.
//
// A finding is a judgement of signatures that were read. When they cannot
// be read (the registry answers an error, 500 or 429 past the retries, a
// 404 that is not its "manifest unknown"; the connection drops; content
// does not match its digest; the context ends) Verify returns that error
// and no findings: an infrastructure fault is not a policy failure, and
// the CLI exits 2 for it, not 1.
func Verify(ctx context.Context, repo name.Repository, subjects []Subject, keys []Key, o VerifyOptions) ([]findings.Finding, error) {
	if len(keys) == 0 || len(subjects) == 0 {
		return nil, nil
	}
	n := o.Concurrency
	if n <= 0 {
		n = snapshot.DefaultConcurrency
	}
	rc := registry.Or(o.Registry)
	ropts, err := rc.Remote(ctx, repo)
	if err != nil {
		return nil, fmt.Errorf("checking the signatures in %s: %w", repo, err)
	}
	out := make([][]findings.Finding, len(subjects))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(n)
	for i, s := range subjects {
		g.Go(func() error {
			held, err := readLegacy(repo, s, ropts)
			if err != nil {
				return err
			}
			// The bundles are read only for the keys no legacy signature
			// satisfies: an image signed in both formats, or only in the
			// legacy one, costs no referrers read.
			var pending []Key
			for _, k := range keys {
				if !held.legacyVerifies(gctx, s, k) {
					pending = append(pending, k)
				}
			}
			if len(pending) == 0 {
				return nil
			}
			if err := held.readBundles(gctx, rc, repo.Digest(s.Digest.String())); err != nil {
				return err
			}
			for _, k := range pending {
				if f := held.judge(gctx, s, k); f != nil {
					out[i] = append(out[i], *f)
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var all []findings.Finding
	for _, fs := range out {
		all = append(all, fs...)
	}
	return all, nil
}

// signatures are the signatures of one subject, as read from every store.
type signatures struct {
	tag     name.Tag
	legacy  []oci.Signature
	bundles []*sgbundle.Bundle
	bad     []error // signatures found but not readable as such
}

// readLegacy reads the legacy signatures of s with cosign's own reader
// of the .sig tag. It reads them itself rather than through
// cosign.VerifyImageSignatures: cosign folds an error reading a
// signature's payload into ErrNoMatchingSignatures as text, and a registry
// fault would then read as a bad signature.
func readLegacy(repo name.Repository, s Subject, opts []remote.Option) (*signatures, error) {
	held := &signatures{tag: registry.SignatureTag(repo, s.Digest, "sig")}
	readErr := func(err error) error {
		return fmt.Errorf("reading the signatures of %s: %w", repo.Digest(s.Digest.String()), err)
	}
	// A 404 of the tag is no signature (cosign's rule); the client's
	// transport makes sure that only a registry's "manifest unknown" is.
	sigs, err := ociremote.Signatures(held.tag, ociremote.WithRemoteOptions(opts...))
	if registry.IsRegistryError(err) {
		return nil, readErr(err)
	}
	var list []oci.Signature
	if err == nil {
		list, err = sigs.Get()
	}
	if registry.IsRegistryError(err) {
		return nil, readErr(err)
	}
	if err != nil {
		held.bad = append(held.bad, fmt.Errorf("could not read the signatures at %s: %w", held.tag, err))
	}
	for _, sig := range list {
		c, err := static.Copy(sig) // reads the payload: the one blob read
		if registry.IsRegistryError(err) {
			return nil, readErr(err)
		}
		if err != nil {
			held.bad = append(held.bad, err)
			continue
		}
		held.legacy = append(held.legacy, c)
	}
	return held, nil
}

// readBundles adds the bundle signatures among subject's referrers.
func (h *signatures) readBundles(ctx context.Context, rc *registry.Client, subject name.Digest) error {
	bundles, bad, err := readBundles(ctx, rc, subject)
	if err != nil {
		return fmt.Errorf("reading the signatures of %s: %w", subject, err)
	}
	h.bundles, h.bad = bundles, append(h.bad, bad...)
	return nil
}

// legacyVerifies reports whether a legacy signature verifies with k,
// offline, as cosign does with --insecure-ignore-tlog:
// cosign.VerifyImageSignature and the simple claim verifier (the payload
// names the exact digest).
func (h *signatures) legacyVerifies(ctx context.Context, s Subject, k Key) bool {
	return h.verifyLegacy(ctx, s, k) == nil
}

func (h *signatures) verifyLegacy(ctx context.Context, s Subject, k Key) []error {
	co := &cosign.CheckOpts{SigVerifier: k.Verifier, ClaimVerifier: cosign.SimpleClaimVerifier, IgnoreTlog: true, IgnoreSCT: true}
	errs := []error{}
	for _, sig := range h.legacy {
		if _, err := cosign.VerifyImageSignature(ctx, sig, s.Digest, co); err != nil {
			errs = append(errs, err)
			continue
		}
		return nil
	}
	return errs
}

// judge verifies the signatures held with key k, a legacy one (see
// legacyVerifies) or a bundle (with sigstore-go, see verifyBundle), and
// returns the finding for k, or nil when one verifies.
func (h *signatures) judge(ctx context.Context, s Subject, k Key) *findings.Finding {
	finding := func(rule, msg string) *findings.Finding {
		f := &findings.Finding{Rule: rule, Severity: findings.Error, Digest: s.Digest.String(), Message: msg}
		if s.Platform != nil {
			f.Platform = platform.Format(*s.Platform)
		}
		return f
	}
	if len(h.legacy)+len(h.bundles)+len(h.bad) == 0 {
		return finding(RuleUnsigned, fmt.Sprintf("no signature (no %s tag, no Sigstore bundle referrer): sign it with imgctl sign --key (needs to verify with %s)", h.tag.TagStr(), k.Name))
	}
	legacyErrs := h.verifyLegacy(ctx, s, k)
	if legacyErrs == nil {
		return nil
	}
	errs := append(append([]error(nil), h.bad...), legacyErrs...)
	for _, b := range h.bundles {
		if err := verifyBundle(b, s.Digest, k); err != nil {
			errs = append(errs, fmt.Errorf("bundle: %w", err))
			continue
		}
		return nil
	}
	return finding(RuleBadSignature, fmt.Sprintf("no signature verifies with %s: %v", k.Name, errors.Join(errs...)))
}
