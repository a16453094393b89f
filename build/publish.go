package build

import (
	"bytes"
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/build/content"
	"github.com/imgctl/imgctl/build/variant"
	"github.com/imgctl/imgctl/index"
	"github.com/imgctl/imgctl/platform"
)

// tagsDirectly reports whether BuildKit pushes the tag itself: one solve
// whose result is already the index to publish (several platforms, none
// Windows, so no descriptor needs an os.version that BuildKit does not
// write). Merging would only re-PUT the same children under a new index;
// every other build is merged by index.PublishPrepared, and so is a build
// with several tags, which then get the tag rule and the per-tag report of
// registry.PublishTags rather than BuildKit's push.
func (p *Plan) tagsDirectly() bool {
	if len(p.Variants) != 1 || len(p.Variants[0].Platforms) < 2 || p.alsoTags > 0 {
		return false
	}
	for _, pl := range p.Variants[0].Platforms {
		if pl.OS == "windows" {
			return false
		}
	}
	return true
}

// publish makes the index at o.Tag from what the solves pushed: through
// index.PublishPrepared, children taken as present (BuildKit pushed them
// into the tag's repository) and their platforms from their configs, so
// that the registry sees one PUT; or, when BuildKit tagged the result
// itself (tagsDirectly), as BuildKit wrote it.
func (r *run) publish(ctx context.Context, exps []*content.Exported) (*index.Result, error) {
	p, o, rc := r.p, r.o, r.rc
	repo := o.Tag.Context()
	if p.tagsDirectly() {
		ex := exps[0]
		im, err := v1.ParseIndexManifest(bytes.NewReader(ex.Raw))
		if err != nil {
			return nil, fmt.Errorf("reading pushed index %s: %w", ex.Top.Digest, err)
		}
		plan := &index.Plan{Manifest: im, Raw: ex.Raw, Digest: ex.Top.Digest}
		from := repo.Digest(ex.Top.Digest.String())
		for j, d := range im.Manifests {
			plan.Entries = append(plan.Entries, &index.Entry{Descriptor: d, Source: repo.Digest(d.Digest.String()), From: from, Child: j})
		}
		return &index.Result{Plan: plan, Tag: o.Tag, Tags: []name.Tag{o.Tag}, Ref: from, Pushed: true, Present: len(im.Manifests)}, nil
	}
	var children []index.Prepared
	for _, ex := range exps {
		if ex.Prepared != nil {
			children = append(children, ex.Prepared...)
			continue
		}
		from := repo.Digest(ex.Top.Digest.String())
		for _, img := range ex.Images {
			children = append(children, index.Prepared{Descriptor: img.Descriptor, From: from, Present: true})
		}
		for _, d := range ex.Attestations {
			children = append(children, index.Prepared{Descriptor: d, From: from, Present: true})
		}
	}
	return index.PublishPrepared(ctx, o.Tag, children, o.Annotations, index.Options{
		Registry: rc, Logger: o.logger(), Force: o.Force, TagChecked: true, AlsoTags: o.AlsoTags,
	})
}

// checkBuilt refuses a Windows image whose config's build is not its
// variant's release: what the builder built, checked before anything is
// tagged. It backs the check before the solve (checkRelease), which judged
// the base the builder resolved: a frontend that ignores the pins
// (Options.SyntaxImage) or a tag that moved cannot slip another build in.
func (p *Plan) checkBuilt(i int, ex *content.Exported) error {
	v := p.Variants[i]
	if v.Release.Build == 0 {
		return nil
	}
	for _, img := range ex.Images {
		pl := img.Descriptor.Platform
		if pl == nil || pl.OS != "windows" {
			continue
		}
		if b, ok := platform.Build(pl.OSVersion); !ok || b != v.Release.Build {
			return fmt.Errorf("%w: variant %s (build %d) came out with os.version %q; check %s",
				ErrBaseMismatch, v.Name, v.Release.Build, pl.OSVersion, variant.WindowsBaseArg)
		}
	}
	return nil
}
