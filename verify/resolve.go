package verify

import (
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/snapshot"
)

// ResolveIndex returns the descriptor of the child manifest an engine pulls
// on host. Like containerd, it reads an entry's config only when the entry
// has no platform; it never reads a layer.
func ResolveIndex(idx v1.ImageIndex, host platform.Platform, e platform.Engine) (v1.Descriptor, error) {
	im, err := idx.IndexManifest()
	if err != nil {
		return v1.Descriptor{}, fmt.Errorf("reading index: %w", err)
	}
	cands := make([]platform.Candidate, len(im.Manifests))
	for i, d := range im.Manifests {
		cands[i].Platform = d.Platform
		if d.Platform != nil || !d.MediaType.IsImage() {
			continue
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			return v1.Descriptor{}, fmt.Errorf("opening manifest %s: %w", d.Digest, err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return v1.Descriptor{}, fmt.Errorf("reading config of %s: %w", d.Digest, err)
		}
		cands[i].Config = cf.Platform()
	}
	sel := e.Select(host, cands)
	if sel < 0 {
		return v1.Descriptor{}, fmt.Errorf("%w %s under %s", ErrNoMatch, platform.Format(host), e.Name())
	}
	d := im.Manifests[sel]
	if d.Platform == nil {
		d.Platform = cands[sel].Config
	}
	return d, nil
}

// ResolveImage checks a single-platform manifest against host by its
// config, as an engine does when a tag points at one manifest.
func ResolveImage(img v1.Image, host platform.Platform, e platform.Engine) (v1.Descriptor, error) {
	s, err := snapshot.LoadImage(img)
	if err != nil {
		return v1.Descriptor{}, err
	}
	d := s.Entries[0].Descriptor
	p := s.Entries[0].ConfigPlatform()
	if p == nil || !e.Match(host, *p) {
		return v1.Descriptor{}, fmt.Errorf("%w %s under %s: the image is %s", ErrNoMatch, platform.Format(host), e.Name(), platform.FormatPtr(p))
	}
	d.Platform = p
	return d, nil
}
