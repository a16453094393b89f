package build

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/imgctl/imgctl/index"
	"github.com/imgctl/imgctl/internal/regclient"
	"github.com/imgctl/imgctl/platform"
)

// resolveBases pins the final base of every platform of every variant.
func (p *Plan) resolveBases(ctx context.Context, rc *regclient.Options) error {
	p.resolved = map[string]ResolvedBase{}
	for i, fbs := range p.Bases {
		for _, fb := range fbs {
			if fb.Name == "" {
				continue
			}
			k := resolvedKey(fb)
			if rb, ok := p.resolved[k]; ok {
				if err := checkRelease(p.Variants[i], fb, rb); err != nil {
					return err
				}
				continue
			}
			ref, err := rc.ParseReference(fb.Name)
			if err != nil {
				return fmt.Errorf("base of stage %s (line %d): %w", fb.Stage, fb.Line, err)
			}
			rb, err := ResolveBase(ctx, ref, fb.StagePlatform, rc.Remote(ctx)...)
			if err != nil {
				return err
			}
			if err := checkRelease(p.Variants[i], fb, rb); err != nil {
				return err
			}
			p.resolved[k] = rb
		}
	}
	return nil
}

func resolvedKey(fb FinalBase) string {
	return fb.Name + "|" + platform.Key(fb.StagePlatform)
}

// resolvedFor returns variant i's resolved bases by platform.Key of the
// target platform.
func (p *Plan) resolvedFor(i int) map[string]ResolvedBase {
	out := map[string]ResolvedBase{}
	for _, fb := range p.Bases[i] {
		if rb, ok := p.resolved[resolvedKey(fb)]; ok && fb.Name != "" {
			out[platform.Key(fb.Platform)] = rb
		}
	}
	return out
}

// sources are the pushed variants by digest in the tag's repository.
func (p *Plan) sources(tag name.Tag, digests []v1.Hash) []name.Reference {
	out := make([]name.Reference, len(digests))
	for i, d := range digests {
		out[i] = tag.Context().Digest(d.String())
	}
	return out
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
				if rb, ok := p.resolved[resolvedKey(fb)]; ok && fb.Name != "" && platform.SameOSArch(fb.Platform, pr.Platform) {
					pr.Base = &rb
				}
			}
		}
		r.Platforms = append(r.Platforms, pr)
	}
	return r, nil
}

// checkRelease refuses a Windows base whose build is not the release's, before solving.
func checkRelease(v Variant, fb FinalBase, rb ResolvedBase) error {
	if v.Release.Build == 0 || fb.StagePlatform.OS != "windows" {
		return nil
	}
	b, ok := platform.Build(rb.OSVersion)
	if !ok || b != v.Release.Build {
		return fmt.Errorf("%w: variant %s (build %d): base %s has os.version %q; check %s",
			ErrBaseMismatch, v.Name, v.Release.Build, rb.Name, rb.OSVersion, WindowsBaseArg)
	}
	return nil
}

func isNotFound(err error) bool {
	var terr *transport.Error
	return errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound
}
