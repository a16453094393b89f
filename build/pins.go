package build

import (
	"strings"

	"github.com/containerd/platforms"
	"github.com/distribution/reference"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/platform"
)

// pins are the named contexts (context:NAME::PLATFORM and context:NAME,
// each =docker-image://NAME@DIGEST) that make the Dockerfile frontend
// build each final base of variant i from what resolveBases resolved
// through the builder. For the platform the frontend resolves the stage
// for, NAME@Digest: the digest the reference pointed at, which the
// frontend resolves again with the same platform match, and so to the
// same image (for a Windows stage on the target platform the solve asks
// for the base's os.version, see solvePlatforms); or the child of the
// release's build when imgctl had to choose it (see
// baseResolver.resolveChild). Without a platform, for any other stage FROM
// the same name, NAME@top. The image is then built on exactly the base its
// annotations name, even if the tag moves during the build, and BuildKit,
// finding that digest in its cache, does not resolve the tag a second
// time. NAME and PLATFORM are normalised as the frontend does
// (dockerui.Client.NamedContext: familiar form without :latest;
// platforms.FormatAll of the normalised platform). A base already given by
// digest, or a name BuildKit would not parse, is left to the frontend.
func (p *Plan) pins(i int) map[string]string {
	out := map[string]string{}
	for _, fb := range p.Bases[i] {
		rb, ok := p.resolved[resolvedKey(i, fb)]
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
		out[key+"::"+platforms.FormatAll(platforms.Normalize(platform.ToSpec(rb.plat)))] = repo + rb.Digest.String()
		out[key] = repo + rb.top.String()
	}
	return out
}

// solvePlatforms are the platforms variant i's solve asks for. A Windows
// platform whose final stage builds FROM a base on the target platform
// carries the os.version of that base's config, as the builder resolved
// it: containerd's matcher in BuildKit then takes an index child of that
// build, the one imgctl resolved, and the image config keeps the base's
// full os.version (BuildKit writes a requested os.version into the
// config). Any other platform is asked for without os.version: a release's
// 10.0.BUILD would replace the base's full os.version in the config.
func (p *Plan) solvePlatforms(i int) []v1.Platform {
	v := p.Variants[i]
	out := make([]v1.Platform, len(v.Platforms))
	for j, pl := range v.Platforms {
		pl.OSVersion = ""
		for _, fb := range p.Bases[i] {
			rb, ok := p.resolved[resolvedKey(i, fb)]
			if ok && fb.Name != "" && pl.OS == "windows" && onTarget(fb) && platform.Key(fb.Platform) == platform.Key(v.Platforms[j]) {
				pl.OSVersion = rb.plat.OSVersion
			}
		}
		out[j] = pl
	}
	return out
}
