package build

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/containerd/platforms"
	"github.com/distribution/reference"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"golang.org/x/sync/errgroup"

	"github.com/imgctl/imgctl/lint"
	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/registry"
)

// resolveBases pins the final base of every platform of every variant:
// one GET per distinct base reference, concurrently, through the build's
// registry session. A Windows base's build is checked against its release
// here when the base is an index (its descriptors carry os.version), and
// after the solve otherwise (checkBuilt).
func (p *Plan) resolveBases(ctx context.Context, rc *registry.Client) error {
	p.resolved = map[string]ResolvedBase{}
	refs := map[string]name.Reference{}
	for _, fbs := range p.Bases {
		for _, fb := range fbs {
			if _, ok := refs[fb.Name]; ok || fb.Name == "" {
				continue
			}
			ref, err := rc.ParseReference(fb.Name)
			if err != nil {
				return fmt.Errorf("base of stage %s (line %d): %w", fb.Stage, fb.Line, err)
			}
			refs[fb.Name] = ref
		}
	}
	descs := make(map[string]*remote.Descriptor, len(refs))
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	for n, ref := range refs {
		g.Go(func() error {
			desc, err := rc.Get(gctx, ref)
			if err != nil {
				return fmt.Errorf("resolving base %s: %w", ref, err)
			}
			if !desc.MediaType.IsImage() && !desc.MediaType.IsIndex() {
				return fmt.Errorf("resolving base %s: %w %q", ref, registry.ErrUnsupportedMediaType, desc.MediaType)
			}
			mu.Lock()
			descs[n] = desc
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for i, fbs := range p.Bases {
		for _, fb := range fbs {
			if fb.Name == "" {
				continue
			}
			k := resolvedKey(fb)
			rb, ok := p.resolved[k]
			if !ok {
				var err error
				if rb, err = pickBase(descs[fb.Name], refs[fb.Name], fb.StagePlatform); err != nil {
					return err
				}
				p.resolved[k] = rb
			}
			if rb.OSVersion == "" {
				continue // an image: checked after the solve, from its config
			}
			if err := checkRelease(p.Variants[i], fb, rb); err != nil {
				return err
			}
		}
	}
	return nil
}

// baseRepos are the repositories of the final bases, for the session's
// pull scopes.
func (p *Plan) baseRepos(rc *registry.Client) []name.Repository {
	var out []name.Repository
	for _, fbs := range p.Bases {
		for _, fb := range fbs {
			if ref, err := rc.ParseReference(fb.Name); err == nil && fb.Name != "" {
				out = append(out, ref.Context())
			}
		}
	}
	return out
}

func resolvedKey(fb lint.FinalBase) string {
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

// pins are the named contexts (context:NAME::PLATFORM and context:NAME,
// each =docker-image://NAME@DIGEST) that make the Dockerfile frontend
// build each final base of variant i from what resolveBases read: for the
// stage's platform, the very manifest the base annotations name (with
// Windows, the child of the release's build, which BuildKit would not
// pick by itself from an index of several builds, since the solve asks
// for plain windows/amd64); for any other platform, the index that held
// it. The image is then built on exactly the base its annotations name,
// even if the tag moves during the build, and BuildKit, finding that
// digest in its cache, does not resolve the tag a second time. NAME and
// PLATFORM are normalised as the frontend does (dockerui.Client.
// NamedContext: familiar form without :latest; platforms.FormatAll of the
// normalised platform, which has no os.version here). A base already
// given by digest, or a name BuildKit would not parse, is left to the
// frontend.
func (p *Plan) pins(i int) map[string]string {
	out := map[string]string{}
	for _, fb := range p.Bases[i] {
		rb, ok := p.resolved[resolvedKey(fb)]
		if !ok || fb.Name == "" {
			continue
		}
		named, err := reference.ParseNormalizedNamed(fb.Name)
		if err != nil {
			continue
		}
		if _, isDigest := named.(reference.Digested); isDigest {
			continue
		}
		key := "context:" + strings.TrimSuffix(reference.FamiliarString(named), ":latest")
		repo := "docker-image://" + reference.TrimNamed(named).String() + "@"
		sp := platform.ToSpec(fb.StagePlatform)
		sp.OSVersion, sp.OSFeatures = "", nil
		out[key+"::"+platforms.FormatAll(platforms.Normalize(sp))] = repo + rb.Digest.String()
		out[key] = repo + rb.top.String()
	}
	return out
}
