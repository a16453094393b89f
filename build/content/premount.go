package content

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/moby/buildkit/client"
	"golang.org/x/sync/errgroup"

	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/registry"
)

// Why imgctl pre-mounts the base layers: after a plain COPY onto a base
// that the build had to pull, BuildKit v0.34.2 pushes the base's layers
// again instead of mounting them from the base's repository, even in the
// same registry. The pulled layer carries no
// containerd.io/distribution.source.<host> label, and containerd's pusher
// (v2.4.2) mounts only from a repository that label names; nothing in the
// exporter's attributes sets it. docs/build.md ("Why BuildKit uploads a
// pulled base again") follows the layer through BuildKit and containerd,
// and cmd/imgctl/cli's TestBuildPremountDist shows it on a fresh buildkitd
// against the distribution registry. The pusher HEADs every blob first and
// skips what the target repository holds, so imgctl mounts the base layers
// into the target repository before the solve, one POST each.

// Base is a resolved final base of a variant, as the solve takes it.
type Base struct {
	// Name is the fully qualified reference, e.g.
	// index.docker.io/library/alpine:3.
	Name string
	// Digest is what the base is pinned to: an index, or an image.
	Digest v1.Hash
	// Platform is the platform the Dockerfile frontend resolves the base
	// for; for a Windows stage on the target platform, with the base's
	// full os.version.
	Platform v1.Platform
	// Target is the variant's target platform the base is for.
	Target v1.Platform
}

// Premounter pre-mounts the base layers of a build's variants into the
// tag's repository and checks, after each solve, that the pre-mount saved
// the uploads (see the comment above).
type Premounter struct {
	// Registry reads a base's manifest that the daemon does not hold.
	Registry *registry.Client
	// Copier mounts into the tag's repository, each layer once per build.
	Copier *registry.Copier
	// Logger receives log lines; nil discards.
	Logger *slog.Logger
	// Note receives notes for the user; nil discards. It may be called
	// from several goroutines at once.
	Note func(msg string)
}

func (p *Premounter) logger() *slog.Logger {
	if p.Logger == nil {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return p.Logger
}

func (p *Premounter) note(msg string) {
	if p.Note != nil {
		p.Note(msg)
	}
}

// BaseLayers are the layers of one resolved final base of a variant, as
// Premounter.Premount read them.
type BaseLayers struct {
	base   Base
	layers []v1.Descriptor
	// mounted are the layers the pre-mount put into the tag's repository.
	mounted map[v1.Hash]bool
}

// Mounted are the layers of base b that the pre-mount put into the tag's
// repository, from bls; nil when it did not read b.
func Mounted(bls []BaseLayers, b Base) map[v1.Hash]bool {
	for _, bl := range bls {
		if bl.base.Digest == b.Digest && bl.base.Name == b.Name {
			return bl.mounted
		}
	}
	return nil
}

// Premount mounts, before a variant is solved, every distributable layer
// of its resolved final bases that sit in another repository of the tag's
// registry into the tag's repository (the Copier's), so that BuildKit's
// push finds them there and uploads none of them again (see the comment
// above). It reads each base's manifest from the daemon c, which holds it
// since it resolved the base, or else from the registry. A base it cannot
// read, and a mount the registry refuses (the Copier cancels the upload it
// opened), are logged at debug and left to BuildKit. The mounts run at
// most Copier-Jobs at a time, each digest once per build. bases are the
// variant's resolved final bases. It returns what it read, for
// CheckBaseLayers and the graft (Mounted).
func (p *Premounter) Premount(ctx context.Context, c *client.Client, bases []Base) []BaseLayers {
	log, rc, cp := p.logger(), p.Registry, p.Copier
	var out []BaseLayers
	var g errgroup.Group
	var mu sync.Mutex
	for _, rb := range bases {
		ref, err := rc.ParseReference(rb.Name)
		if err != nil || !registry.Mountable(ref.Context(), cp.Repository()) {
			continue
		}
		layers, err := readBaseLayers(ctx, c, rc, ref.Context(), rb)
		if err != nil {
			log.Debug("not pre-mounting base", "base", rb.Name, "digest", rb.Digest.String(), "error", err)
			continue
		}
		bl := BaseLayers{base: rb, layers: layers, mounted: map[v1.Hash]bool{}}
		out = append(out, bl)
		log.Info("pre-mounting", "base", rb.Name, "layers", len(layers), "into", cp.Repository().Name())
		for _, l := range layers {
			if !l.MediaType.IsDistributable() {
				continue
			}
			g.Go(func() error {
				if !cp.TryMount(ctx, l.Digest, ref.Context()) {
					log.Debug("base layer not mounted, BuildKit uploads it", "base", rb.Name, "layer", l.Digest.String())
					return nil
				}
				mu.Lock()
				bl.mounted[l.Digest] = true
				mu.Unlock()
				return nil
			})
		}
	}
	_ = g.Wait() // mounts report no error: a failed one is BuildKit's upload
	return out
}

// readBaseLayers reads the layers of rb as the solve takes it: rb.Digest,
// or, when that is an index, the child that BuildKit's platform match
// takes for rb.Platform.
func readBaseLayers(ctx context.Context, c *client.Client, rc *registry.Client, repo name.Repository, rb Base) ([]v1.Descriptor, error) {
	raw, err := ImageManifest(ctx, c, rc, repo, rb)
	if err != nil {
		return nil, err
	}
	var m v1.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("reading base manifest: %w", err)
	}
	return m.Layers, nil
}

// ImageManifest reads the image manifest of rb, of repository repo, as
// the solve takes it: rb.Digest, or, when that is an index, the child
// that BuildKit's platform match takes for rb.Platform. Each manifest is
// read from the daemon c, else from the registry (BaseManifest).
func ImageManifest(ctx context.Context, c *client.Client, rc *registry.Client, repo name.Repository, rb Base) ([]byte, error) {
	raw, err := BaseManifest(ctx, c, rc, repo, rb.Digest)
	if err != nil {
		return nil, err
	}
	idx, err := IsIndex(raw)
	if err != nil || !idx {
		return raw, err
	}
	child, err := matchChild(raw, rb.Platform)
	if err != nil {
		return nil, err
	}
	return BaseManifest(ctx, c, rc, repo, child)
}

// BaseManifest reads manifest h of repo from the daemon's content
// store (where resolving the base put it), else from the registry.
func BaseManifest(ctx context.Context, c *client.Client, rc *registry.Client, repo name.Repository, h v1.Hash) ([]byte, error) {
	if raw, err := ReadBlob(ctx, c.ContentClient(), h, 0); err == nil {
		return raw, nil
	}
	desc, err := rc.Get(ctx, repo.Digest(h.String()))
	if err != nil {
		return nil, fmt.Errorf("reading base manifest %s@%s: %w", repo, h, err)
	}
	return desc.Manifest, nil
}

// IsIndex reports whether raw, a base's manifest, is an index: by its
// media type, or, when it states none, by a manifests list.
func IsIndex(raw []byte) (bool, error) {
	var head struct {
		MediaType types.MediaType `json:"mediaType"`
		Manifests json.RawMessage `json:"manifests"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return false, fmt.Errorf("reading base manifest: %w", err)
	}
	return head.MediaType.IsIndex() || (head.MediaType == "" && head.Manifests != nil), nil
}

// ChildOf finds, in a base's raw manifest, the index child the solve
// takes for plat: platform.BaseChild's choice, of plat's build, which is
// BuildKit's wherever the index has an image of plat's architecture
// (TestBaseChildIsBuildKitsLinuxChild). ok is false when raw is an image,
// not an index, or when the index has no such child.
func ChildOf(raw []byte, plat v1.Platform) (child v1.Descriptor, ok bool, err error) {
	if idx, err := IsIndex(raw); err != nil || !idx {
		return v1.Descriptor{}, false, err
	}
	im, err := v1.ParseIndexManifest(bytes.NewReader(raw))
	if err != nil {
		return v1.Descriptor{}, false, fmt.Errorf("reading base index: %w", err)
	}
	d, same, ok := platform.BaseChild(im.Manifests, plat)
	return d, ok && same, nil
}

// matchChild is ChildOf for a base known to be an index: a missing child
// is an error.
func matchChild(raw []byte, plat v1.Platform) (v1.Hash, error) {
	d, ok, err := ChildOf(raw, plat)
	switch {
	case err != nil:
		return v1.Hash{}, err
	case !ok:
		return v1.Hash{}, fmt.Errorf("base index has no image for %s", platform.Format(plat))
	}
	return d.Digest, nil
}

// CheckBaseLayers says, in a note, when an image of ex, what variant's
// solve pushed, does not list the layers of its base (of the same OS and
// architecture) unchanged at the bottom of its own: BuildKit then pushed
// the base's content under other digests (recompressed), and the pre-mount
// saved nothing. Images not read back (a solve BuildKit tags itself) are
// not checked.
func (p *Premounter) CheckBaseLayers(variant string, ex *Exported, bls []BaseLayers) {
	for _, bl := range bls {
		for _, img := range ex.Images {
			if img.Descriptor.Platform == nil || !platform.SameOSArch(bl.base.Target, *img.Descriptor.Platform) {
				continue
			}
			if j := firstDifferentLayer(bl.layers, img.Layers); j >= 0 {
				msg := fmt.Sprintf("variant %s: the %s image %s does not list the layers of its base %s@%s unchanged (layer %d differs): BuildKit pushed the base's content again under other digests, and the pre-mount of the base's layers saved no upload",
					variant, platform.Format(*img.Descriptor.Platform), img.Descriptor.Digest, bl.base.Name, bl.base.Digest, j)
				p.logger().Warn("base layers changed", slog.String("variant", variant), slog.String("image", img.Descriptor.Digest.String()), slog.Int("layer", j))
				p.note(msg)
			}
		}
	}
}

// firstDifferentLayer is the index of the first of base's layers that
// image does not list at the same position, or -1 when image starts with
// all of them.
func firstDifferentLayer(base, image []v1.Descriptor) int {
	for j, l := range base {
		if j >= len(image) || image[j].Digest != l.Digest {
			return j
		}
	}
	return -1
}
