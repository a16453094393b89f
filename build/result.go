package build

import (
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/build/variant"
	"github.com/imgctl/imgctl/index"
	"github.com/imgctl/imgctl/lint"
	"github.com/imgctl/imgctl/platform"
)

// PlatformResult is one image of the merged index.
type PlatformResult struct {
	// Platform is the index descriptor's platform.
	Platform v1.Platform
	// Digest is the manifest digest.
	Digest v1.Hash
	// Variant is the name of the solve that built it (linux, ltsc2022...).
	Variant string
	// Base is the final stage's base; nil for FROM scratch.
	Base *ResolvedBase
}

// Result is what Build published.
type Result struct {
	// Index is the merge result: the tag, the index digest and its entries.
	Index *index.Result
	// Variants are the solves, in the order they were planned.
	Variants []variant.Variant
	// Platforms are the images of the index in index order, attestations left out.
	Platforms []PlatformResult
}

// result matches the index entries to their variants and bases, and checks
// that every Windows release came out with its own build.
func (p *Plan) result(res *index.Result, digests []v1.Hash) (*Result, error) {
	r := &Result{Index: res, Variants: p.Variants}
	for _, e := range res.Entries {
		if e.IsAttestation() || e.Descriptor.Platform == nil {
			continue
		}
		pr := PlatformResult{Platform: *e.Descriptor.Platform, Digest: e.Descriptor.Digest}
		for i, d := range digests {
			if e.Source.DigestStr() != d.String() && e.From.Identifier() != d.String() {
				continue
			}
			pr.Variant = p.Variants[i].Name
			for _, fb := range p.Bases[i] {
				if rb, ok := p.resolved[resolvedKey(i, fb)]; ok && fb.Name != "" && platform.SameOSArch(fb.Platform, pr.Platform) {
					pr.Base = &rb
				}
			}
		}
		r.Platforms = append(r.Platforms, pr)
	}
	return r, nil
}

// checkRelease refuses a Windows base whose os.version, from the config
// the builder resolved, is not of the variant's release build, before
// anything is solved (checkBuilt checks the built images again).
func checkRelease(v variant.Variant, fb lint.FinalBase, rb ResolvedBase) error {
	if v.Release.Build == 0 || fb.StagePlatform.OS != "windows" {
		return nil
	}
	b, ok := platform.Build(rb.OSVersion)
	if !ok || b != v.Release.Build {
		return fmt.Errorf("%w: variant %s (build %d): base %s has os.version %q; check %s",
			ErrBaseMismatch, v.Name, v.Release.Build, rb.Name, rb.OSVersion, variant.WindowsBaseArg)
	}
	return nil
}
