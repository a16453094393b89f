package patchlevel

import (
	"context"
	"fmt"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/registry"
)

// reader reads revisions' created dates through the run's client.
type reader struct {
	rc *registry.Client
}

// revision reads the created of one revision of want's build in repo: the
// architecture's twin tag when there is one (its image manifest, then the
// config: 2 reads), else the revision tag (the index, its child for want,
// then the config: 3 reads). The config's os.version must be the
// revision's: a tag that holds another version is an error, not a date.
func (r reader) revision(ctx context.Context, repo name.Repository, rt revisionTag, want platform.Platform) (Revision, error) {
	b, _ := platform.Build(want.OSVersion)
	version := fmt.Sprintf("10.0.%d.%d", b, rt.revision)
	tag := rt.twin
	if tag == "" {
		tag = rt.tag
	}
	img, err := r.image(ctx, repo.Tag(tag), want)
	if err != nil {
		return Revision{}, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return Revision{}, fmt.Errorf("reading the config of %s:%s: %w", repo, tag, err)
	}
	if cfg.OSVersion != version {
		return Revision{}, fmt.Errorf("%s:%s holds os.version %q, not %s", repo, tag, cfg.OSVersion, version)
	}
	if cfg.Created.IsZero() {
		return Revision{}, fmt.Errorf("%s:%s: the config has no created date", repo, tag)
	}
	created := cfg.Created.UTC()
	return Revision{Version: version, Tag: tag, Created: created, Cycle: platform.DateOf(platform.Cycle(created))}, nil
}

// image reads the image a tag names: the image itself, or an index's
// child for want (platform.BaseChild, of the same build).
func (r reader) image(ctx context.Context, ref name.Tag, want platform.Platform) (v1.Image, error) {
	rd, err := r.rc.Get(ctx, ref)
	if err != nil {
		return nil, err
	}
	if !rd.MediaType.IsIndex() {
		img, err := rd.Image()
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", ref, err)
		}
		return img, nil
	}
	idx, err := rd.ImageIndex()
	if err != nil {
		return nil, fmt.Errorf("reading index %s: %w", ref, err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("reading index %s: %w", ref, err)
	}
	d, same, ok := platform.BaseChild(im.Manifests, want)
	if !ok || !same {
		return nil, fmt.Errorf("%s has no image for %s", ref, platform.Format(want))
	}
	img, err := idx.Image(d.Digest)
	if err != nil {
		return nil, fmt.Errorf("reading %s@%s: %w", ref.Context(), d.Digest, err)
	}
	return img, nil
}

// ImageCreated returns the created date of the image config of the image
// manifest ref names: two reads, the manifest and the config. It is how
// bases reports a Linux base's date, which has no revision tags to count.
func ImageCreated(ctx context.Context, rc *registry.Client, ref name.Digest) (time.Time, error) {
	rd, err := rc.Get(ctx, ref)
	if err != nil {
		return time.Time{}, err
	}
	img, err := rd.Image()
	if err != nil {
		return time.Time{}, fmt.Errorf("reading %s: %w", ref, err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return time.Time{}, fmt.Errorf("reading the config of %s: %w", ref, err)
	}
	if cfg.Created.IsZero() {
		return time.Time{}, fmt.Errorf("the config of %s has no created date", ref)
	}
	if cfg.Created.Unix() == 0 {
		// Reproducible builds (distroless, ko, apko, SOURCE_DATE_EPOCH=0)
		// write the epoch: it says nothing of when the base was made.
		return time.Time{}, fmt.Errorf("the config of %s gives the Unix epoch as its created date, as reproducible builds do: it does not say when the base was made", ref)
	}
	return cfg.Created.UTC(), nil
}
