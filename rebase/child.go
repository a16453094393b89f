package rebase

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/index"
	"github.com/imgctl/imgctl/platform"
)

// child prepares one variant: unchanged when it is current, rebased
// otherwise.
func (s *session) child(ctx context.Context, in *source, v *variant) (index.Prepared, error) {
	appCfg, err := s.config(ctx, v.app)
	if err != nil {
		return index.Prepared{}, err
	}
	if !v.Stale {
		v.snap = snapEntry{manifest: v.app.manifest, config: appCfg.file}
		return s.carried(v.desc, v.app, in.ref), nil
	}
	if v.BuildChange && !s.o.AllowBuildChange {
		return index.Prepared{}, fmt.Errorf("variant %s: %w: %s has no image of build %s any more (newest: %s)",
			v.Platform, ErrBuildChange, v.BaseName, buildOf(v.OldOSVersion), v.NewOSVersion)
	}
	if v.old == nil {
		return index.Prepared{}, fmt.Errorf("variant %s: %w", v.Platform, ErrNoBaseDigest)
	}
	p := parts{app: v.app, appCfg: appCfg}
	repo := v.current.repo
	oldDigest, err := s.oldChild(ctx, repo, *v.old, v.plat)
	if err == nil {
		v.oldChild = oldDigest
		p.old, err = s.image(ctx, repo, oldDigest)
	}
	if err == nil {
		p.new, err = s.image(ctx, repo, v.current.desc.Digest)
	}
	for _, x := range []struct {
		img *image
		dst **config
	}{{p.old, &p.oldCfg}, {p.new, &p.newCfg}} {
		if err == nil {
			*x.dst, err = s.config(ctx, x.img)
		}
	}
	if err != nil {
		return index.Prepared{}, fmt.Errorf("variant %s: %w", v.Platform, err)
	}
	r, err := rewrite(v, p)
	if err != nil {
		return index.Prepared{}, err
	}
	v.newBaseCreated = p.newCfg.file.Created.Time
	if v.BuildChange {
		v.note = fmt.Sprintf("%s moved from build %s to %s (allowed)", v.Platform, buildOf(v.OldOSVersion), buildOf(r.cfg.OSVersion))
	}
	v.NewDigest, v.snap = r.desc.Digest.String(), snapEntry{manifest: r.parsed, config: r.cfg}
	c := prepared(r.desc, &image{repo: v.app.repo, raw: r.manifest, manifest: r.parsed}, r.config, p.new)
	c.From = in.ref
	return c, nil
}

// prepared describes a child for index.PublishPrepared. The config comes
// from cfg when it is new (the manifest's config differs from the app's)
// and from the app's repository otherwise; the first layers come from base
// when it is set, the others from the app's repository.
func prepared(desc v1.Descriptor, img *image, cfg []byte, base *image) index.Prepared {
	c := index.Prepared{Descriptor: desc, Manifest: img.raw}
	c.Blobs = append(c.Blobs, index.Blob{Descriptor: img.manifest.Config, From: img.repo, Data: cfg})
	n := 0
	if base != nil {
		n = len(base.manifest.Layers)
	}
	for i, l := range img.manifest.Layers {
		from := img.repo
		if i < n {
			from = base.repo
		}
		c.Blobs = append(c.Blobs, index.Blob{Descriptor: l, From: from})
	}
	return c
}

// carried prepares a child that goes into the new index as it is, from
// src: it is already stored when src is the target's repository, so it
// is neither asked for nor uploaded there (see index.Prepared.Present).
func (s *session) carried(desc v1.Descriptor, img *image, src name.Reference) index.Prepared {
	c := prepared(desc, img, nil, nil)
	c.From = src
	c.Present = s.target != nil && src.Context().Name() == s.target.Name()
	return c
}

// kept prepares an attestation (or another image that is not a variant)
// that is carried over as it is, from the source repository.
func (s *session) kept(ctx context.Context, in *source, d v1.Descriptor) (index.Prepared, error) {
	if !d.MediaType.IsImage() {
		return index.Prepared{}, fmt.Errorf("child %s: %w %s: rebase carries only images and attestations", d.Digest, ErrMediaType, d.MediaType)
	}
	img, err := s.image(ctx, in.ref.Context(), d.Digest)
	if err != nil {
		return index.Prepared{}, err
	}
	return s.carried(d, img, in.ref), nil
}

// buildOf returns the build of an os.version for messages, "-" for none.
func buildOf(osVersion string) string {
	if b, ok := platform.Build(osVersion); ok {
		return fmt.Sprint(b)
	}
	return "-"
}
