package build

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/containerd/platforms"
	"github.com/distribution/reference"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/moby/buildkit/client"
	"github.com/moby/buildkit/util/purl"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/imgctl/imgctl/index"
	"github.com/imgctl/imgctl/internal/rawmanifest"
	"github.com/imgctl/imgctl/lint"
	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/snapshot"
)

// graft is the zero-download build of one Windows variant. A Windows stage
// without RUN depends on its base only through the base's config, its
// layer positions and its directory tree. So the variant is solved FROM a
// placeholder instead of the base: an image with the base's config whose
// layers are the skeletons of the base's layers (skeleton.go), pushed by
// digest into the tag's repository and put in place of the base by the
// same named-context pins that pin the base (pins.go). BuildKit pulls the
// skeletons (kilobytes), applies them as a Windows image, runs the stage's
// COPY, ADD and WORKDIR on the same directory tree, and writes the stage's
// own layers in the Windows layout with its own Windows differ, as on the
// real base. Then imgctl grafts those layers onto the real base: the
// manifest lists the base's layers (mounted into the tag's repository
// before the solve, see premount, or streamed across registries by the
// merge) and then the stage's; the config's diff_ids list the base's;
// history, env, user, workdir and os.version are the solve's, which
// BuildKit derived from the base's config. The builder never fetches a base
// layer.
//
// The provenance BuildKit attached names the placeholder where it would
// name the base: the graft rewrites the statement so that it names the
// base as the plain path would, and its subject, the grafted image.
type graft struct {
	fb       lint.FinalBase
	base     ResolvedBase
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

// windowsBase is the final base of variant i's Windows platform that a
// graft replaces, when there is one: a named image, resolved, on the
// target platform.
func (p *Plan) windowsBase(i int) (lint.FinalBase, ResolvedBase, bool) {
	for _, fb := range p.Bases[i] {
		if fb.Platform.OS != "windows" || fb.Name == "" || !onTarget(fb) {
			continue
		}
		if rb, ok := p.resolved[resolvedKey(i, fb)]; ok {
			return fb, rb, true
		}
	}
	return lint.FinalBase{}, ResolvedBase{}, false
}

// plainReason says why variant i must take BuildKit's plain path, which
// pulls the base; "" when the variant can be grafted. It reads only the
// Dockerfile and the options.
func (p *Plan) plainReason(i int, o *Options) string {
	v := p.Variants[i]
	switch {
	case o.NeedsBaseFiles():
		return "--sbom scans the base's files"
	case p.syntaxImage != "" || v.BuildArgs["BUILDKIT_SYNTAX"] != "":
		return "a frontend image (--syntax-image, BUILDKIT_SYNTAX) may not build FROM the pinned base"
	case o.Provenance != nil && o.Provenance.Mode == ProvenanceMax:
		return "provenance mode=max records the build definition, which would name the placeholder base"
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

// graftOrPlain returns the graft of variant i, with its placeholder
// pushed, or nil when the variant takes BuildKit's plain path: a Linux
// variant, Options.WindowsPlain, or a reason the build notes (among them
// a base imgctl cannot read, which the builder may reach through its
// mirrors). An error pushing into the tag's repository fails the build.
func (p *Plan) graftOrPlain(ctx context.Context, i int, c *client.Client, o *Options, cp *registry.Copier, sk *skeletons) (*graft, error) {
	v := p.Variants[i]
	if o.WindowsPlain || !slices.ContainsFunc(v.Platforms, func(pl v1.Platform) bool { return pl.OS == "windows" }) {
		return nil, nil
	}
	reason := p.plainReason(i, o)
	var g *graft
	if reason == "" {
		var err error
		if g, reason, err = p.prepareGraft(ctx, i, c, o, cp, sk); err != nil {
			return nil, err
		}
	}
	if reason != "" {
		o.note(fmt.Sprintf("variant %s: BuildKit's plain path, which downloads the base: %s", v.Name, reason))
		return nil, nil
	}
	o.logger().Info("grafting", "variant", v.Name, "base", g.base.Name, "placeholder", g.placeholder.DigestStr(),
		"layers", len(g.layers), "skeleton-bytes-read", sk.bytesRead())
	return g, nil
}

// names reports whether err names the placeholder: the builder could not
// pull it.
func (g *graft) names(err error) bool {
	return g.placeholder.DigestStr() != "" && strings.Contains(err.Error(), g.placeholder.DigestStr())
}

// mountedLayers are the layers of base that the pre-mount put into the
// tag's repository.
func mountedLayers(bls []baseLayers, base ResolvedBase) map[v1.Hash]bool {
	for _, bl := range bls {
		if bl.base.Digest == base.Digest && bl.base.Name == base.Name {
			return bl.mounted
		}
	}
	return nil
}

// prepareGraft reads variant i's Windows base (manifest and config, through
// the builder as the resolution did), makes the skeletons of its layers and
// pushes the placeholder into the tag's repository. reason is set, and the
// variant takes the plain path, when the base cannot be grafted onto.
func (p *Plan) prepareGraft(ctx context.Context, i int, c *client.Client, o *Options, cp *registry.Copier, sk *skeletons) (g *graft, reason string, err error) {
	g, err = p.readGraftBase(ctx, i, c, o, cp, sk)
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
	return g, "", g.pushPlaceholder(ctx, cp)
}

// errUnusableBase is a base a graft cannot stand on, and why.
type errUnusableBase struct{ reason string }

func (e errUnusableBase) Error() string { return e.reason }

// readGraftBase reads variant i's Windows base and makes the skeletons of
// its layers; a base in another registry is streamed into the tag's
// repository on the way (skeletons.copyLayer), or, its skeletons cached,
// copied there, so that the merge reads nothing of the base's registry.
func (p *Plan) readGraftBase(ctx context.Context, i int, c *client.Client, o *Options, cp *registry.Copier, sk *skeletons) (*graft, error) {
	rc := o.registry()
	fb, rb, _ := p.windowsBase(i)
	ref, err := rc.ParseReference(rb.Name)
	if err != nil {
		return nil, err
	}
	g := &graft{fb: fb, base: rb, baseRepo: ref.Context()}
	raw, err := readBaseManifest(ctx, c, rc, g.baseRepo, rb.Digest)
	if err != nil {
		return nil, err
	}
	child := rb.Digest
	if idx, err := isIndex(raw); err != nil {
		return nil, err
	} else if idx {
		if child, err = matchChild(raw, rb.plat); err != nil {
			return nil, err
		}
		if raw, err = readBaseManifest(ctx, c, rc, g.baseRepo, child); err != nil {
			return nil, err
		}
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
	across := g.baseRepo.RegistryStr() != cp.Repository().RegistryStr()
	for _, l := range m.Layers {
		var s v1.Layer
		if across {
			// The layer has to cross anyway: it crosses once, and its
			// skeleton is made on the way.
			var copied bool
			if s, copied, err = sk.copyLayer(ctx, rc, cp, g.baseRepo, l); err == nil && !copied {
				err = cp.RemoteBlob(ctx, l.Digest, l.MediaType, g.baseRepo)
			}
			g.copied[l.Digest] = err == nil
		} else {
			s, err = sk.layer(ctx, rc, g.baseRepo, l)
		}
		if err != nil {
			return nil, err
		}
		d, err := s.Digest()
		if err != nil {
			return nil, err
		}
		diffID, err := s.DiffID()
		if err != nil {
			return nil, err
		}
		size, err := s.Size()
		if err != nil {
			return nil, err
		}
		g.skeletons = append(g.skeletons, v1.Descriptor{MediaType: types.OCILayer, Digest: d, Size: size})
		g.skelDiffIDs = append(g.skelDiffIDs, diffID)
		g.skeletonLayers = append(g.skeletonLayers, s)
	}
	g.config = craw
	return g, nil
}

// pushPlaceholder pushes the placeholder into the tag's repository: the
// skeletons, the base's config with the skeletons' diff_ids, and a
// manifest, by digest.
func (g *graft) pushPlaceholder(ctx context.Context, cp *registry.Copier) error {
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
	if raw, err := readContent(ctx, c.ContentClient(), h, 0); err == nil {
		return raw, nil
	}
	return rc.SmallBlob(ctx, repo.Digest(h.String()))
}

// pins puts the placeholder in place of the Windows base for the
// platform the frontend resolves it for (the key pins.go writes with that
// platform); the key without a platform, for other platforms, keeps its
// pin, as the provenance then records the plain path's.
func (g *graft) pins(attrs map[string]string) {
	named, err := reference.ParseNormalizedNamed(g.fb.Name)
	if err != nil {
		return
	}
	key := "context:" + strings.TrimSuffix(reference.FamiliarString(named), ":latest")
	attrs[key+"::"+platforms.FormatAll(platforms.Normalize(platform.ToSpec(g.base.plat)))] = "docker-image://" + g.placeholder.String()
}

// apply grafts the solve's Windows image onto the base and returns the
// children the merge publishes for it: the grafted image and its rewritten
// attestations, with the blobs they need (the new config and statements in
// memory, the base's layers from the base's repository, or from the tag's
// when mounted is true for them). The image BuildKit pushed stays in the
// tag's repository, untagged.
func (g *graft) apply(ctx context.Context, src blobSource, ex *exported, repo name.Repository, mounted map[v1.Hash]bool) ([]index.Prepared, error) {
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
	mraw, err := src.read(ctx, img.Descriptor, true)
	if err != nil {
		return nil, err
	}
	var m v1.Manifest
	if err := json.Unmarshal(mraw, &m); err != nil {
		return nil, err
	}
	craw, err := src.read(ctx, m.Config, false)
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
	ex.Images[0] = exportedImage{Descriptor: desc, Config: cf, Layers: nm.Layers}
	ex.Top, ex.Raw = desc, newM
	return out, nil
}

// attestation rewrites attestation manifest a of image old for image img:
// each in-toto statement's subject and the placeholder named in its
// predicate (see rewriteStatement), and the manifest's reference to the image.
func (g *graft) attestation(ctx context.Context, src blobSource, a v1.Descriptor, old, img v1.Hash, imgSize int64, repo name.Repository) (index.Prepared, error) {
	raw, err := src.read(ctx, a, true)
	if err != nil {
		return index.Prepared{}, err
	}
	var m v1.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return index.Prepared{}, err
	}
	statements := make([][]byte, len(m.Layers))
	for j, l := range m.Layers {
		st, err := src.read(ctx, l, false)
		if err != nil {
			return index.Prepared{}, err
		}
		if statements[j], err = g.rewriteStatement(st, old, img); err != nil {
			return index.Prepared{}, err
		}
	}
	var craw []byte
	if m.Config.MediaType != types.MediaType(ocispecs.MediaTypeEmptyJSON) {
		if craw, err = src.read(ctx, m.Config, false); err != nil {
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
func (g *graft) rewriteStatement(st []byte, old, img v1.Hash) ([]byte, error) {
	named, err := reference.ParseNormalizedNamed(g.fb.Name)
	if err != nil {
		return nil, err
	}
	baseRef := reference.TrimNamed(named).String() + "@" + g.base.Digest.String()
	phHex := strings.TrimPrefix(g.placeholder.DigestStr(), "sha256:")
	plat := platforms.Normalize(platform.ToSpec(g.base.plat))
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
