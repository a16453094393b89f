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
// RuleBadSignature otherwise, including when the check itself failed. It
// returns no findings when keys is empty.
func Verify(ctx context.Context, repo name.Repository, subjects []Subject, keys []Key, o VerifyOptions) []verify.Finding {
	var (
		mu  sync.Mutex
		out = make([][]verify.Finding, len(subjects))
	)
	n := o.Concurrency
	if n <= 0 {
		n = snapshot.DefaultConcurrency
	}
	rc := registry.Or(o.Registry)
	ropts, err := rc.Remote(ctx, repo)
	if err != nil {
		return []verify.Finding{{Rule: RuleBadSignature, Severity: verify.Error, Digest: subjects[0].Digest.String(),
			Message: fmt.Sprintf("could not check the signatures: %v", err)}}
	}
	var g errgroup.Group
	g.SetLimit(n)
	for i, s := range subjects {
		for _, k := range keys {
			g.Go(func() error {
				f := check(ctx, repo, s, k, ropts)
				if f != nil {
					mu.Lock()
					out[i] = append(out[i], *f)
					mu.Unlock()
				}
				return nil
			})
		}
	}
	_ = g.Wait()
	var all []verify.Finding
	for _, fs := range out {
		all = append(all, fs...)
	}
	return all
}

// check verifies one subject with one key with cosign's own code, offline.
func check(ctx context.Context, repo name.Repository, s Subject, k Key, opts []remote.Option) *verify.Finding {
	ref := repo.Digest(s.Digest.String())
	co := &cosign.CheckOpts{
		RegistryClientOpts: []ociremote.Option{ociremote.WithRemoteOptions(opts...), ociremote.WithTargetRepository(repo)},
		SigVerifier:        k.Verifier,
		ClaimVerifier:      cosign.SimpleClaimVerifier,
		IgnoreTlog:         true,
		IgnoreSCT:          true,
	}
	_, _, err := cosign.VerifyImageSignatures(ctx, ref, co)
	if err == nil {
		return nil
	}
	f := &verify.Finding{Rule: RuleBadSignature, Severity: verify.Error, Digest: s.Digest.String()}
	if s.Platform != nil {
		f.Platform = platform.Format(*s.Platform)
	}
	var none *cosign.ErrNoSignaturesFound
	var nomatch *cosign.ErrNoMatchingSignatures
	switch {
	case errors.As(err, &none):
		f.Rule, f.Message = RuleUnsigned, fmt.Sprintf("no signature: sign it with imgctl sign --key (needs to verify with %s)", k.Name)
	case errors.As(err, &nomatch):
		f.Message = fmt.Sprintf("no signature verifies with %s: %v", k.Name, err)
	default:
		f.Message = fmt.Sprintf("could not check the signatures with %s: %v", k.Name, err)
	}
	return f
}
