package build

import (
	"context"
	"fmt"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/moby/buildkit/client"

	"github.com/imgctl/imgctl/build/content"
	"github.com/imgctl/imgctl/build/graft"
	"github.com/imgctl/imgctl/lint"
)

// graftBase is variant i's resolved final base fb as package graft takes
// it; ok is false for FROM scratch and a base that was not resolved.
func (p *Plan) graftBase(i int, fb lint.FinalBase) (graft.Base, bool) {
	rb, ok := p.resolved[resolvedKey(i, fb)]
	if !ok || fb.Name == "" {
		return graft.Base{}, false
	}
	return graft.Base{Ref: fb.Name, Base: content.Base{Name: rb.Name, Digest: rb.Digest, Platform: rb.plat, Target: fb.Platform}}, true
}

// windowsBase is the final base of variant i's Windows platform that a
// graft replaces, when there is one: a named image, resolved, on the
// target platform.
func (p *Plan) windowsBase(i int) (lint.FinalBase, graft.Base, bool) {
	for _, fb := range p.Bases[i] {
		if fb.Platform.OS != "windows" || fb.Name == "" || !onTarget(fb) {
			continue
		}
		if b, ok := p.graftBase(i, fb); ok {
			return fb, b, true
		}
	}
	return lint.FinalBase{}, graft.Base{}, false
}

// premount mounts the layers of variant i's resolved final bases into the
// tag's repository before its solve (content.Premounter.Premount).
func (r *run) premount(ctx context.Context, i int, c *client.Client) []content.BaseLayers {
	var bases []content.Base
	for _, fb := range r.p.Bases[i] {
		if b, ok := r.p.graftBase(i, fb); ok {
			bases = append(bases, b.Base)
		}
	}
	return r.premounts.Premount(ctx, c, bases)
}

// plainReason says why variant i must take BuildKit's plain path, which
// pulls the base; "" when the variant can be grafted. It reads only the
// Dockerfile and the options.
func (r *run) plainReason(i int) string {
	p, o := r.p, r.o
	v := p.Variants[i]
	switch {
	case o.NeedsBaseFiles():
		return "an SBOM scans the base's files"
	case p.syntaxImage != "" || v.BuildArgs["BUILDKIT_SYNTAX"] != "":
		return "a frontend image (the syntax image, BUILDKIT_SYNTAX) may not build FROM the pinned base"
	case len(v.Platforms) != 1:
		return "the variant has several platforms"
	case i < len(p.native) && p.native[i]:
		return "its builder runs Windows stages natively"
	}
	fb, _, ok := p.windowsBase(i)
	if !ok {
		return "the final Windows stage has no base image resolved on its platform"
	}
	reads, err := lint.BaseFileReads(p.Dockerfile, p.File, p.lintOpts[i], fb.Platform, fb.Name)
	if err != nil {
		return err.Error()
	}
	if len(reads) > 0 {
		var rs []string
		for _, r := range reads {
			rs = append(rs, r.String())
		}
		return strings.Join(rs, "; ")
	}
	return ""
}

// graftOrPlain returns the graft of variant i, solved on c, with its
// placeholder pushed (graft.Run.Prepare), or nil when the variant takes
// BuildKit's plain path: a Linux variant, Options.WindowsPlain, or a
// reason the build notes (among them a base imgctl cannot read, which the
// builder may reach through its mirrors). An error pushing into the tag's
// repository fails the build.
func (r *run) graftOrPlain(ctx context.Context, i int, c *client.Client) (*graft.Graft, error) {
	v := r.p.Variants[i]
	if r.o.WindowsPlain || !slices.ContainsFunc(v.Platforms, func(pl v1.Platform) bool { return pl.OS == "windows" }) {
		return nil, nil
	}
	reason := r.plainReason(i)
	var g *graft.Graft
	if reason == "" {
		fb, b, _ := r.p.windowsBase(i)
		// The placeholder is pruned to the paths the stage writes (see
		// skeleton.Prune); unknown writes keep it whole.
		if w, err := lint.BaseFileWrites(r.p.Dockerfile, r.p.File, r.p.lintOpts[i], fb.Platform, fb.Name); err == nil {
			b.Writes = w.Paths
		}
		var err error
		if g, reason, err = r.grafts.Prepare(ctx, v.Name, c, b); err != nil {
			return nil, err
		}
	}
	if reason != "" {
		r.o.note(fmt.Sprintf("variant %s: BuildKit's plain path, which downloads the base: %s", v.Name, reason))
		return nil, nil
	}
	return g, nil
}
