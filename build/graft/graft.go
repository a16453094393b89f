// Package graft builds a Windows variant without downloading its base:
// the variant is solved FROM a placeholder made of the base's config and
// the skeletons of its layers (package skeleton), and the stage's layers
// are then grafted onto the real base (Graft). What every variant's solve
// needs, the pre-mount of its base layers and the read-back of what it
// pushed, is package content's. Package build decides which variants are
// grafted and drives the solves.
package graft

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"strings"
	"sync"

	contentapi "github.com/containerd/containerd/api/services/content/v1"
	"github.com/containerd/platforms"
	"github.com/distribution/reference"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/moby/buildkit/client"
	"github.com/moby/buildkit/session"
	"github.com/moby/buildkit/util/purl"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/imgctl/imgctl/build/content"
	"github.com/imgctl/imgctl/build/skeleton"
	"github.com/imgctl/imgctl/index"
	"github.com/imgctl/imgctl/internal/rawmanifest"
	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/snapshot"
)

// Graft is the zero-download build of one Windows variant. A Windows stage
// without RUN depends on its base only through the base's config, its
// layer positions and its directory tree. So the variant is solved FROM a
// placeholder instead of the base: an image with the base's config whose
// layers are the skeletons of the base's layers (package skeleton), pushed by
// digest into the tag's repository and put in place of the base by the
// same named-context pins that pin the base (package build's pins.go; see
// Pins). BuildKit pulls the skeletons (kilobytes), applies them as a
// Windows image, runs the stage's COPY, ADD and WORKDIR on the same
// directory tree, and writes the stage's
// own layers in the Windows layout with its own Windows differ, as on the
// real base. Then imgctl grafts those layers onto the real base: the
// manifest lists the base's layers (mounted into the tag's repository
// before the solve, see content.Premounter, or streamed across registries by the
// merge) and then the stage's; the config's diff_ids list the base's;
// history, env, user, workdir and os.version are the solve's, which
// BuildKit derived from the base's config. The builder never fetches a base
// layer.
//
// The provenance BuildKit attached names the placeholder where it would
// name the base: the graft rewrites the statement so that it names the
// base as the plain path would, and its subject, the grafted image.
type Graft struct {
	base     Base
	baseRepo name.Repository
	// layers and diffIDs are the base image's, for the variant's platform.
	layers  []v1.Descriptor
	diffIDs []v1.Hash
	// skeleton layers, in base layer order, and the placeholder.
	skeletons   []v1.Descriptor
	skelDiffIDs []v1.Hash
	placeholder name.Digest
	// skeletonLayers are the skeletons to push; config is the base's.
	skeletonLayers []v1.Layer
	config         []byte
	// copied are the base layers streamed into the tag's repository while
	// their skeletons were made (a base in another registry).
	copied map[v1.Hash]bool
}

// ErrGraft is the error of a graft that went wrong after the solve.
var ErrGraft = errors.New("grafting the Windows layers onto the base")

// Base is a final base of a variant, as the builder resolved it and the
// solve pins it.
type Base struct {
	// Base is the resolved base: name, digest and platforms.
	content.Base
	// Ref is the base's reference as the Dockerfile names it, after ARG
	// expansion (mcr.microsoft.com/windows/nanoserver:ltsc2022): the
	// Dockerfile frontend's named contexts are keyed by it.
	Ref string
	// Writes returns the paths the stages on the base write, given the
	// base's working directory (lint.BaseWrites.Paths), to prune the
	// placeholder to; nil, or false, keeps it whole.
	Writes func(baseWorkdir string) ([]string, bool)
}

// Run is what the grafts of one build share.
type Run struct {
	// Registry reads what a daemon does not hold (a base's manifest or
	// config, the layers skeletons are made of).
	Registry *registry.Client
	// Copier writes into the tag's repository: placeholders and base
	// layers streamed across registries, each layer once per build (the
	// pre-mount's Copier, which mounted the base layers).
	Copier *registry.Copier
	// Skeletons makes and caches the skeletons of base layers.
	Skeletons *skeleton.Maker
	// Logger receives log lines; nil discards.
	Logger *slog.Logger
	// Note receives notes for the user; nil discards. It may be called
	// from several goroutines at once.
	Note func(msg string)
	// Attachables are the session attachables (registry credentials) of a
	// solve that pulls a base through the builder; nil reads no base
	// through the builder.
	Attachables func() ([]session.Attachable, error)
	// Progress returns the status channel of such a solve, shown under
	// label, and what waits for its display to end; nil shows nothing.
	Progress func(ctx context.Context, label string) (status chan *client.SolveStatus, wait func())
}

func (r *Run) logger() *slog.Logger {
	if r.Logger == nil {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return r.Logger
}

func (r *Run) note(msg string) {
	if r.Note != nil {
		r.Note(msg)
	}
}

// NamesPlaceholder reports whether err names the placeholder: the builder
// could not pull it.
func (g *Graft) NamesPlaceholder(err error) bool {
	return g.placeholder.DigestStr() != "" && strings.Contains(err.Error(), g.placeholder.DigestStr())
}

// Prepare reads the Windows base b of variant (manifest and config,
// through the builder c, as the resolution did), makes the skeletons of its
// layers and pushes the placeholder into the tag's repository. reason is
// set, and the variant takes BuildKit's plain path, when the base cannot
// be grafted onto (among them a base neither imgctl nor the builder can
// read). An error pushing into the tag's repository is returned.
func (r *Run) Prepare(ctx context.Context, variant string, c *client.Client, b Base) (g *Graft, reason string, err error) {
	g, err = r.readBase(ctx, c, b)
	if err != nil && ctx.Err() != nil {
		return nil, "", ctx.Err() // the build is ending; no note
	}
	var unusable errUnusableBase
	if errors.As(err, &unusable) {
		return nil, unusable.reason, nil
	}
	if err != nil {
		return nil, fmt.Sprintf("reading the base for its directory tree: %v", err), nil
	}
	if err := g.pushPlaceholder(ctx, r.Copier); err != nil {
		return nil, "", err
	}
	r.logger().Info("grafting", "variant", variant, "base", g.base.Name, "placeholder", g.placeholder.DigestStr(),
		"layers", len(g.layers), "skeleton-bytes-read", r.Skeletons.BytesRead())
	return g, "", nil
}

// errUnusableBase is a base a graft cannot stand on, and why.
type errUnusableBase struct{ reason string }

func (e errUnusableBase) Error() string { return e.reason }

// readBase reads the Windows base b and makes the skeletons of its layers
// (fromRegistry): a base in another registry is streamed into the tag's
// repository on the way, so that the merge reads nothing of the base's
// registry. Layers imgctl cannot read itself (a base only the builder's
// mirrors reach) are read through the builder c (throughBuilder).
func (r *Run) readBase(ctx context.Context, c *client.Client, b Base) (*Graft, error) {
	rc := r.Registry
	ref, err := rc.ParseReference(b.Name)
	if err != nil {
		return nil, err
	}
	g := &Graft{base: b, baseRepo: ref.Context()}
	raw, err := content.ImageManifest(ctx, c, rc, g.baseRepo, b.Base)
	if err != nil {
		return nil, err
	}
	m, err := v1.ParseManifest(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("reading base manifest: %w", err)
	}
	for _, l := range m.Layers {
		if !l.MediaType.IsDistributable() {
			return nil, errUnusableBase{fmt.Sprintf("the base has a foreign layer (%s), whose directory tree imgctl cannot read", l.Digest)}
		}
	}
	craw, err := readBaseBlob(ctx, c, rc, g.baseRepo, m.Config.Digest)
	if err != nil {
		return nil, err
	}
	cf, err := v1.ParseConfigFile(bytes.NewReader(craw))
	if err != nil {
		return nil, fmt.Errorf("reading base config: %w", err)
	}
	if len(cf.Config.OnBuild) > 0 {
		return nil, errUnusableBase{"the base has ONBUILD triggers, which may read its files"}
	}
	if len(cf.RootFS.DiffIDs) != len(m.Layers) {
		return nil, errUnusableBase{fmt.Sprintf("the base's config lists %d diff_ids for %d layers", len(cf.RootFS.DiffIDs), len(m.Layers))}
	}
	g.layers, g.diffIDs = m.Layers, cf.RootFS.DiffIDs
	g.copied = map[v1.Hash]bool{}
	g.config = craw
	var paths []string
	var key string // the placeholder's prune key; "" keeps it whole
	if b.Writes != nil {
		var ok bool
		if paths, ok = b.Writes(cf.Config.WorkingDir); ok {
			key = skeleton.PruneKey(m.Layers, paths)
		}
	}
	// A placeholder made before for these layers and writes, here or on
	// another runner: kilobytes, whatever the base's size.
	if key != "" {
		if skels, ok := r.prunedPlaceholder(ctx, g, key); ok {
			return g, g.setPlaceholder(skels)
		}
	}
	// The layers are read at once (up to the client's jobs): each read
	// is one stream through gunzip and tar, CPU-bound for a large base.
	skels := make([]v1.Layer, len(m.Layers))
	errs := make([]error, len(m.Layers))
	copied := make([]bool, len(m.Layers))
	sem := make(chan struct{}, max(rc.Jobs(), 1))
	var wg sync.WaitGroup
	for j, l := range m.Layers {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			skels[j], copied[j], errs[j] = r.fromRegistry(ctx, g, l)
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var pending []int // layers only the builder can read
	var readErr error
	for j, l := range m.Layers {
		g.copied[l.Digest] = copied[j]
		if errs[j] != nil {
			r.logger().Debug("base layer unreadable here, trying the builder", "base", b.Name, "layer", l.Digest.String(), "error", errs[j])
			pending, readErr = append(pending, j), cmp.Or(readErr, errs[j])
		}
	}
	if len(pending) > 0 {
		if err := r.throughBuilder(ctx, c, g, pending, skels); err != nil {
			return nil, fmt.Errorf("%w; and through the builder: %w", readErr, err)
		}
	}
	if key != "" {
		if skels, err = r.prune(ctx, g, skels, paths, key); err != nil {
			return nil, err
		}
	}
	return g, g.setPlaceholder(skels)
}

// setPlaceholder makes skels (one per base layer) the placeholder's layers.
func (g *Graft) setPlaceholder(skels []v1.Layer) error {
	for _, s := range skels {
		d, err := s.Digest()
		if err != nil {
			return err
		}
		diffID, err := s.DiffID()
		if err != nil {
			return err
		}
		size, err := s.Size()
		if err != nil {
			return err
		}
		g.skeletons = append(g.skeletons, v1.Descriptor{MediaType: types.OCILayer, Digest: d, Size: size})
		g.skelDiffIDs = append(g.skelDiffIDs, diffID)
		g.skeletonLayers = append(g.skeletonLayers, s)
	}
	return nil
}

// prunedPlaceholder is the placeholder's layers pruned with key, each made
// before (skeleton.Maker.Pruned), with the base's layers in the tag's
// repository: mounted by the pre-mount within a registry, present or
// copied there across registries. false sends the caller the long way:
// a layer without a pruned entry, or one the tag's repository lacks and
// imgctl cannot copy (a base only the builder reaches).
func (r *Run) prunedPlaceholder(ctx context.Context, g *Graft, key string) ([]v1.Layer, bool) {
	cp := r.Copier
	skels := make([]v1.Layer, len(g.layers))
	for j, l := range g.layers {
		var ok bool
		if skels[j], ok = r.Skeletons.Pruned(ctx, l.Digest, key); !ok {
			return nil, false
		}
	}
	if g.baseRepo.RegistryStr() == cp.Repository().RegistryStr() {
		return skels, true
	}
	for _, l := range g.layers {
		has, err := cp.Has(ctx, l.Digest)
		if err == nil && !has {
			err = cp.RemoteBlob(ctx, l.Digest, l.MediaType, g.baseRepo)
		}
		if err != nil {
			r.logger().Debug("base layer not in the tag's repository; reading the base", "layer", l.Digest.String(), "error", err)
			return nil, false
		}
		g.copied[l.Digest] = true
	}
	r.logger().Info("placeholder from the skeleton cache", "base", g.base.Name, "layers", len(g.layers))
	return skels, true
}

// fromRegistry is the skeleton of base layer l, made by imgctl itself: a
// skeleton made before (the local cache, the registry cache), else one
// made by reading the layer from the base's repository. A base in another
// registry is put into the tag's repository on the way (g.copied): the
// layer crosses once, and its skeleton is made from the same stream; with
// a known skeleton, a layer the tag's repository holds already is not
// read at all. copied reports that the layer is in the tag's repository.
func (r *Run) fromRegistry(ctx context.Context, g *Graft, l v1.Descriptor) (s v1.Layer, copied bool, err error) {
	rc, cp, sk := r.Registry, r.Copier, r.Skeletons
	if g.baseRepo.RegistryStr() == cp.Repository().RegistryStr() {
		s, err = sk.Layer(ctx, rc, g.baseRepo, l)
		return s, false, err
	}
	s, copied, err = sk.CopyLayer(ctx, rc, cp, g.baseRepo, l)
	if err == nil && !copied {
		if copied, err = cp.Has(ctx, l.Digest); err == nil && !copied {
			err = cp.RemoteBlob(ctx, l.Digest, l.MediaType, g.baseRepo)
			copied = err == nil
		}
	}
	return s, copied, err
}

// throughBuilder makes the skeletons of the base layers imgctl could not
// read (pending, indexes into g.layers) from the builder: the builder
// pulls the base through its own registry configuration (its mirrors, see
// content.PullThroughBuilder), and each layer streams once from its content store
// into the tag's repository, unless that holds it, and into the layer's
// skeleton, unless one is known. The skeletons are then cached, locally
// and in the registry, so the next build on any runner reads neither.
func (r *Run) throughBuilder(ctx context.Context, c *client.Client, g *Graft, pending []int, skels []v1.Layer) error {
	if c == nil || r.Attachables == nil {
		return errors.New("no builder to read it through")
	}
	att, err := r.Attachables()
	if err != nil {
		return err
	}
	var status chan *client.SolveStatus
	if r.Progress != nil {
		var wait func()
		status, wait = r.Progress(ctx, "base "+g.base.Name)
		defer wait()
	}
	ref := g.baseRepo.Name() + "@" + g.base.Digest.String()
	var read int64
	err = content.PullThroughBuilder(ctx, c, att, ref, g.base.Platform, status, func(ctx context.Context, cs contentapi.ContentClient) error {
		for _, j := range pending {
			l := g.layers[j]
			present, err := r.Copier.Has(ctx, l.Digest)
			if err != nil {
				return err
			}
			base, err := content.DaemonLayer(ctx, cs, l)
			if err != nil {
				return err
			}
			if skels[j], err = r.Skeletons.FromBuilder(ctx, base, r.Copier, g.baseRepo, l, present); err != nil {
				return fmt.Errorf("base layer %s from the builder: %w", l.Digest, err)
			}
			g.copied[l.Digest] = true
			read += l.Size
		}
		return nil
	})
	if err != nil {
		return err
	}
	r.note(fmt.Sprintf("base %s: imgctl cannot read it, so the builder pulled it through its own registry configuration (its mirrors) and imgctl read %d of its layers (%d bytes) from the builder to graft onto it; their skeletons are cached for the next build",
		g.base.Name, len(pending), read))
	return nil
}

// prune returns the placeholder's layers for skeletons: each pruned to
// the tree along paths (skeleton.Prune) and kept under key for the next
// build, or the skeletons whole when a kept path is a symbolic link.
func (r *Run) prune(ctx context.Context, g *Graft, skels []v1.Layer, paths []string, key string) ([]v1.Layer, error) {
	raw := make([][]byte, len(skels))
	for j, s := range skels {
		rc, err := s.Compressed()
		if err != nil {
			return nil, err
		}
		raw[j], err = io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, err
		}
	}
	pruned, ok, err := skeleton.Prune(raw, paths)
	if err != nil {
		return nil, fmt.Errorf("pruning the placeholder: %w", err)
	}
	if !ok {
		r.logger().Info("placeholder not pruned: a written path goes through a symbolic link")
		return skels, nil
	}
	out := make([]v1.Layer, len(pruned))
	var before, after int
	for j, b := range pruned {
		if out[j], err = r.Skeletons.KeepPruned(ctx, g.layers[j].Digest, key, b); err != nil {
			return nil, err
		}
		before, after = before+len(raw[j]), after+len(b)
	}
	r.logger().Info("placeholder pruned to the written paths", "paths", len(paths), "skeleton-bytes", before, "placeholder-bytes", after)
	return out, nil
}

// pushPlaceholder pushes the placeholder into the tag's repository: the
// skeletons, the base's config with the skeletons' diff_ids, and a
// manifest, by digest.
func (g *Graft) pushPlaceholder(ctx context.Context, cp *registry.Copier) error {
	phConfig, err := rawmanifest.WithDiffIDs(g.config, g.skelDiffIDs)
	if err != nil {
		return err
	}
	ch, _, err := v1.SHA256(bytes.NewReader(phConfig))
	if err != nil {
		return err
	}
	phManifest, err := json.Marshal(v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		Config:        v1.Descriptor{MediaType: types.OCIConfigJSON, Digest: ch, Size: int64(len(phConfig))},
		Layers:        g.skeletons,
	})
	if err != nil {
		return err
	}
	mh, _, err := v1.SHA256(bytes.NewReader(phManifest))
	if err != nil {
		return err
	}
	g.placeholder = cp.Repository().Digest(mh.String())
	for _, b := range g.skeletonLayers {
		if err := cp.Upload(ctx, b); err != nil {
			return err
		}
	}
	if err := cp.UploadBytes(ctx, ch, phConfig); err != nil {
		return err
	}
	if err := cp.Put(ctx, g.placeholder, registry.RawManifest{Raw: phManifest, Type: types.OCIManifestSchema1}); err != nil {
		return err
	}
	return nil
}

// readBaseBlob reads a base's blob (its config) from the builder's content
// store, which holds what the resolution read, or from the registry.
func readBaseBlob(ctx context.Context, c *client.Client, rc *registry.Client, repo name.Repository, h v1.Hash) ([]byte, error) {
	if raw, err := content.ReadBlob(ctx, c.ContentClient(), h, 0); err == nil {
		return raw, nil
	}
	return rc.SmallBlob(ctx, repo.Digest(h.String()))
}

// Pins puts, in the solve's frontend attributes attrs, the placeholder in
// place of the Windows base for the platform the frontend resolves it for
// (the key package build's pins write with that platform); the key without
// a platform, for other platforms, keeps its pin, as the provenance then
// records the plain path's.
func (g *Graft) Pins(attrs map[string]string) {
	named, err := reference.ParseNormalizedNamed(g.base.Ref)
	if err != nil {
		return
	}
	key := "context:" + strings.TrimSuffix(reference.FamiliarString(named), ":latest")
	attrs[key+"::"+platforms.FormatAll(platforms.Normalize(platform.ToSpec(g.base.Platform)))] = "docker-image://" + g.placeholder.String()
}

// Apply grafts the solve's Windows image onto the base and returns the
// children the merge publishes for it: the grafted image and its rewritten
// attestations, with the blobs they need (the new config and statements in
// memory, the base's layers from the base's repository, or from the tag's,
// repo, where the pre-mount, bls, or the graft put them). The image
// BuildKit pushed stays in the tag's repository, untagged; ex then
// describes the grafted image.
func (g *Graft) Apply(ctx context.Context, src content.BlobSource, ex *content.Exported, repo name.Repository, bls []content.BaseLayers) ([]index.Prepared, error) {
	mounted := content.Mounted(bls, g.base.Base)
	if len(ex.Images) != 1 {
		return nil, fmt.Errorf("%w: the solve pushed %d images, want 1", ErrGraft, len(ex.Images))
	}
	img := ex.Images[0]
	n := len(g.skeletons)
	if len(img.Layers) < n || len(img.Config.RootFS.DiffIDs) < n {
		return nil, fmt.Errorf("%w: the solve's image has %d layers, fewer than the placeholder's %d", ErrGraft, len(img.Layers), n)
	}
	for j, s := range g.skeletons {
		if img.Layers[j].Digest != s.Digest || img.Config.RootFS.DiffIDs[j] != g.skelDiffIDs[j] {
			return nil, fmt.Errorf("%w: layer %d of the solve's image is not the placeholder's", ErrGraft, j)
		}
	}
	mraw, err := src.Read(ctx, img.Descriptor, true)
	if err != nil {
		return nil, err
	}
	var m v1.Manifest
	if err := json.Unmarshal(mraw, &m); err != nil {
		return nil, err
	}
	craw, err := src.Read(ctx, m.Config, false)
	if err != nil {
		return nil, err
	}
	// The placeholder's layers give way to the base's, their media types
	// in the family of the manifest BuildKit wrote, as its exporter
	// converts base layers (oci-mediatypes).
	base := rawmanifest.Base{DiffIDs: g.diffIDs}
	for _, l := range g.layers {
		raw, err := rawmanifest.Encode(l)
		if err != nil {
			return nil, err
		}
		base.Layers = append(base.Layers, raw)
	}
	ed, err := rawmanifest.ReplaceBase(mraw, craw, img.Descriptor.MediaType, rawmanifest.Replaced{Layers: n}, base, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrGraft, err)
	}
	config, newM := ed.Config, ed.Manifest
	ch, _, err := v1.SHA256(bytes.NewReader(config))
	if err != nil {
		return nil, err
	}
	mh, _, err := v1.SHA256(bytes.NewReader(newM))
	if err != nil {
		return nil, err
	}
	desc := img.Descriptor
	desc.Digest, desc.Size = mh, int64(len(newM))
	blobs := []index.Blob{{Descriptor: v1.Descriptor{MediaType: m.Config.MediaType, Digest: ch, Size: int64(len(config))}, Data: config}}
	for _, l := range g.layers {
		from := g.baseRepo
		if mounted[l.Digest] || g.copied[l.Digest] {
			from = repo
		}
		blobs = append(blobs, index.Blob{Descriptor: l, From: from})
	}
	out := []index.Prepared{{Descriptor: desc, Manifest: newM, Blobs: blobs, From: repo.Digest(img.Descriptor.Digest.String())}}
	for _, a := range ex.Attestations {
		if a.Annotations[snapshot.AnnotationReferenceDigest] != img.Descriptor.Digest.String() {
			out = append(out, index.Prepared{Descriptor: a, From: repo.Digest(a.Digest.String()), Present: true})
			continue
		}
		pa, err := g.attestation(ctx, src, a, img.Descriptor.Digest, mh, desc.Size, repo)
		if err != nil {
			return nil, err
		}
		out = append(out, pa)
	}
	// The rest of the build sees the grafted image.
	cf, err := v1.ParseConfigFile(bytes.NewReader(config))
	if err != nil {
		return nil, err
	}
	nm, err := v1.ParseManifest(bytes.NewReader(newM))
	if err != nil {
		return nil, err
	}
	ex.Images[0] = content.ExportedImage{Descriptor: desc, Config: cf, Layers: nm.Layers}
	ex.Top, ex.Raw = desc, newM
	return out, nil
}

// attestation rewrites attestation manifest a of image old for image img:
// each in-toto statement's subject and the placeholder named in its
// predicate (see rewriteStatement), and the manifest's reference to the image.
func (g *Graft) attestation(ctx context.Context, src content.BlobSource, a v1.Descriptor, old, img v1.Hash, imgSize int64, repo name.Repository) (index.Prepared, error) {
	raw, err := src.Read(ctx, a, true)
	if err != nil {
		return index.Prepared{}, err
	}
	var m v1.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return index.Prepared{}, err
	}
	statements := make([][]byte, len(m.Layers))
	for j, l := range m.Layers {
		st, err := src.Read(ctx, l, false)
		if err != nil {
			return index.Prepared{}, err
		}
		if statements[j], err = g.rewriteStatement(st, old, img); err != nil {
			return index.Prepared{}, err
		}
	}
	var craw []byte
	if m.Config.MediaType != types.MediaType(ocispecs.MediaTypeEmptyJSON) {
		if craw, err = src.Read(ctx, m.Config, false); err != nil {
			return index.Prepared{}, err
		}
	}
	at, err := rawmanifest.RewriteAttestation(raw, craw, statements, v1.Descriptor{Digest: img, Size: imgSize})
	if err != nil {
		return index.Prepared{}, fmt.Errorf("%w: %w", ErrGraft, err)
	}
	var blobs []index.Blob
	for j, l := range at.Layers {
		blobs = append(blobs, index.Blob{Descriptor: l, Data: statements[j]})
	}
	if at.Config != nil {
		blobs = append(blobs, index.Blob{Descriptor: at.ConfigDescriptor, Data: at.Config})
	}
	newRaw := at.Manifest
	h, _, err := v1.SHA256(bytes.NewReader(newRaw))
	if err != nil {
		return index.Prepared{}, err
	}
	d := a
	d.Digest, d.Size = h, int64(len(newRaw))
	d.Annotations = maps.Clone(a.Annotations)
	d.Annotations[snapshot.AnnotationReferenceDigest] = img.String()
	return index.Prepared{Descriptor: d, Manifest: newRaw, Blobs: blobs, From: repo.Digest(a.Digest.String())}, nil
}

// rewriteStatement points an in-toto statement at image img instead of old,
// and names the base where it names the placeholder: as the pinned
// reference (NAME@DIGEST, in the frontend's context pins) and as a package
// URL with the base image's digest (the resolved dependency), each as the
// plain path writes it. The dependency keeps the placeholder's place in
// the list (BuildKit sorts images by reference; the list's order carries no
// meaning in SLSA's resolvedDependencies).
func (g *Graft) rewriteStatement(st []byte, old, img v1.Hash) ([]byte, error) {
	named, err := reference.ParseNormalizedNamed(g.base.Ref)
	if err != nil {
		return nil, err
	}
	baseRef := reference.TrimNamed(named).String() + "@" + g.base.Digest.String()
	phHex := strings.TrimPrefix(g.placeholder.DigestStr(), "sha256:")
	plat := platforms.Normalize(platform.ToSpec(g.base.Platform))
	// The plain path's pin names base.Digest (an index, or the child
	// imgctl chose), and BuildKit records the digest the pin names.
	oldPURL, err1 := purl.RefToPURL("docker", g.placeholder.String(), &plat)
	newPURL, err2 := purl.RefToPURL("docker", baseRef, &plat)
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	// Longer strings first: at one position the first pair that matches
	// wins. BuildKit's JSON escapes the & of a package URL as \u0026.
	r := strings.NewReplacer(
		jsonString(oldPURL), jsonString(newPURL),
		oldPURL, newPURL,
		"docker-image://"+g.placeholder.String(), "docker-image://"+baseRef,
		phHex, g.base.Digest.Hex,
		old.Hex, img.Hex,
	)
	out := r.Replace(string(st))
	if strings.Contains(out, phHex) {
		return nil, fmt.Errorf("%w: the attestation still names the placeholder %s", ErrGraft, g.placeholder)
	}
	if !json.Valid([]byte(out)) {
		return nil, fmt.Errorf("%w: the rewritten attestation is not JSON", ErrGraft)
	}
	return []byte(out), nil
}

// jsonString is s as encoding/json writes it inside a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}
