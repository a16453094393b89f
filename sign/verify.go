package sign

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/cosign/v2/pkg/cosign"
	ociremote "github.com/sigstore/cosign/v2/pkg/oci/remote"
	"github.com/sigstore/cosign/v2/pkg/oci/static"
	"golang.org/x/sync/errgroup"

	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/snapshot"
	"github.com/imgctl/imgctl/verify"
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
// A finding is a judgement of signatures that were read. When they cannot
// be read (the registry answers an error, 500 or 429 past the retries, a
// 404 that is not its "manifest unknown"; the connection drops; content
// does not match its digest; the context ends) Verify returns that error
// and no findings: an infrastructure fault is not a policy failure, and
// the CLI exits 2 for it, not 1.
func Verify(ctx context.Context, repo name.Repository, subjects []Subject, keys []Key, o VerifyOptions) ([]verify.Finding, error) {
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
	var (
		mu  sync.Mutex
		out = make([][]verify.Finding, len(subjects))
	)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(n)
	for i, s := range subjects {
		for _, k := range keys {
			g.Go(func() error {
				f, err := check(gctx, repo, s, k, ropts)
				if err != nil || f == nil {
					return err
				}
				mu.Lock()
				out[i] = append(out[i], *f)
				mu.Unlock()
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var all []verify.Finding
	for _, fs := range out {
		all = append(all, fs...)
	}
	return all, nil
}

// check verifies one subject with one key with cosign's own code, offline,
// as cosign.VerifyImageSignatures does, but reading the signatures itself
// first: cosign folds an error reading a signature's payload into
// ErrNoMatchingSignatures as text, and a registry fault would then read as
// a bad signature. It returns a finding for a signature read and found
// missing or wrong, and an error when the signatures could not be read.
func check(ctx context.Context, repo name.Repository, s Subject, k Key, opts []remote.Option) (*verify.Finding, error) {
	tag := registry.SignatureTag(repo, s.Digest, "sig")
	finding := func(rule, msg string) *verify.Finding {
		f := &verify.Finding{Rule: rule, Severity: verify.Error, Digest: s.Digest.String(), Message: msg}
		if s.Platform != nil {
			f.Platform = platform.Format(*s.Platform)
		}
		return f
	}
	readErr := func(err error) (*verify.Finding, error) {
		if registry.IsRegistryError(err) {
			return nil, fmt.Errorf("reading the signatures of %s: %w", repo.Digest(s.Digest.String()), err)
		}
		return finding(RuleBadSignature, fmt.Sprintf("could not read the signatures at %s: %v", tag, err)), nil
	}
	// A 404 of the tag is no signature (cosign's rule); the client's
	// transport makes sure that only a registry's "manifest unknown" is.
	sigs, err := ociremote.Signatures(tag, ociremote.WithRemoteOptions(opts...))
	if err != nil {
		return readErr(err)
	}
	list, err := sigs.Get()
	if err != nil {
		return readErr(err)
	}
	if len(list) == 0 {
		return finding(RuleUnsigned, fmt.Sprintf("no signature: sign it with imgctl sign --key (needs to verify with %s)", k.Name)), nil
	}
	co := &cosign.CheckOpts{SigVerifier: k.Verifier, ClaimVerifier: cosign.SimpleClaimVerifier, IgnoreTlog: true, IgnoreSCT: true}
	var errs []error
	for _, sig := range list {
		held, err := static.Copy(sig) // reads the payload: the one blob read
		if err != nil {
			if registry.IsRegistryError(err) {
				return readErr(err)
			}
			errs = append(errs, err)
			continue
		}
		if _, err := cosign.VerifyImageSignature(ctx, held, s.Digest, co); err != nil {
			errs = append(errs, err)
			continue
		}
		return nil, nil
	}
	return finding(RuleBadSignature, fmt.Sprintf("no signature verifies with %s: %v", k.Name, errors.Join(errs...))), nil
}
