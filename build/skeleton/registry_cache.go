package skeleton

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/verify"
)

// The skeleton cache in a registry: one OCI artifact per base layer, so
// that a build on any runner (an ephemeral one has no local cache) reads
// kilobytes to megabytes of skeleton instead of the base layer. The entry
// of layer sha256:HEX is the tag imgctl-skeleton-v1-sha256-HEX of the
// cache repository: an OCI image manifest whose artifactType is
// ArtifactType, whose config is the OCI empty descriptor, whose
// one layer is the skeleton (gzip, as writeSkeletonTar writes it), and
// whose annotations name the base layer and the skeleton format.
// Skeletons are byte-for-byte the same wherever they are made (gzip
// without name or time), so concurrent writers PUT the same manifest under
// the same tag.
const (
	// ArtifactType is the artifactType of a skeleton cache entry.
	ArtifactType = "application/vnd.imgctl.windows-skeleton.v1"
	// AnnotationLayer names the base layer (its digest) whose
	// skeleton the entry holds.
	AnnotationLayer = "dev.imgctl.skeleton.layer"
	// AnnotationFormat is the skeleton format of the entry.
	AnnotationFormat = "dev.imgctl.skeleton.format"
	// Format is the format writeSkeletonTar writes: every entry
	// of the layer kept, contents left out but for keptFiles.
	Format = "1"
	// skeletonTagPrefix starts the tag of a cache entry.
	skeletonTagPrefix = "imgctl-skeleton-v" + Format + "-"
	// maxCachedSkeleton bounds what an entry may make imgctl read: a
	// servercore layer's skeleton is a few MB.
	maxCachedSkeleton = 256 << 20
)

// ErrEntry is a cache entry imgctl ignores: not a skeleton of the
// layer it is filed under, in this format, in the Windows layout.
var ErrEntry = errors.New("unusable skeleton cache entry")

// emptyConfig is the OCI empty descriptor's content ({}).
var emptyConfig = []byte("{}")

// Tag is the tag of the cache entry of base layer h.
func Tag(h v1.Hash) string { return skeletonTagPrefix + h.Algorithm + "-" + h.Hex }

// AnnotationPruned is the prune key of an entry that holds a
// placeholder's layer (a skeleton pruned to the paths a stage writes, see
// prune.go) rather than a whole skeleton.
const AnnotationPruned = "dev.imgctl.skeleton.pruned"

// entryKey names a cache entry: base layer h's whole skeleton, or, with a
// prune key, its pruned one.
type entryKey struct {
	h      v1.Hash
	pruned string
}

// tag is the entry's tag: Tag, then -p and the prune key.
func (k entryKey) tag() string {
	if k.pruned == "" {
		return Tag(k.h)
	}
	return Tag(k.h) + "-p" + k.pruned
}

// RegistryCache reads and writes skeleton cache entries in one
// repository. Trust: a skeleton decides the directory metadata the
// stage's layers are written against, so whoever may write the cache may
// change what a build produces. A RegistryCache is therefore made only for
// a repository the build writes anyway (its tag's) or one named
// explicitly, and an explicit one is read only after the registry has
// shown that this build may write it (CheckWrite). Entries are checked
// before use (Check): an entry outside the Windows layout, with
// content, or filed under another layer is ignored, with a note, and made
// again. A repository that refuses writes (read-only, immutable tags)
// degrades to the local cache, with a note.
type RegistryCache struct {
	rc       *registry.Client
	cp       *registry.Copier
	explicit bool
	note     func(string)

	mu      sync.Mutex
	checked bool   // the write check ran (explicit repositories)
	off     string // why the cache is not read or written any more
	bytes   int64  // skeleton bytes read from entries
	hits    int
	// configUp: the empty config is in the repository (put).
	configUp bool
	// refused are the entries Get ignored: Put replaces them.
	refused map[entryKey]bool
}

// NewRegistryCache is the skeleton cache in repository repo. explicit is
// true for a repository the user named (--skeleton-cache) rather than the
// build's own target repository; note receives what the cache notes.
func NewRegistryCache(rc *registry.Client, repo name.Repository, explicit bool, note func(string)) *RegistryCache {
	return &RegistryCache{rc: rc, cp: rc.Copier(repo), explicit: explicit, note: note, refused: map[entryKey]bool{}}
}

// Repository is the cache's repository.
func (c *RegistryCache) Repository() name.Repository { return c.cp.Repository() }

// Stats are the entries used and the skeleton bytes read from them.
func (c *RegistryCache) Stats() (hits int, bytesRead int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, c.bytes
}

// usable reports whether the cache may be read and written, running the
// write check of an explicit repository once.
func (c *RegistryCache) usable(ctx context.Context) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.explicit && !c.checked {
		c.checked = true
		if err := c.cp.CheckWrite(ctx); err != nil {
			c.disable(fmt.Sprintf("this build may not write it (%v), so it is not read either", err))
		}
	}
	return c.off == ""
}

// disable turns the cache off with a note; the caller holds mu.
func (c *RegistryCache) disable(why string) {
	if c.off != "" {
		return
	}
	c.off = why
	c.note(fmt.Sprintf("skeleton cache %s: %s; skeletons stay in the local cache", c.cp.Repository(), why))
}

// Get returns the cached skeleton of base layer h, checked, or false: no
// entry, an unreadable one, or one Check refuses (noted).
func (c *RegistryCache) Get(ctx context.Context, h v1.Hash) ([]byte, bool) {
	return c.get(ctx, entryKey{h: h})
}

// GetPruned is Get of the placeholder layer of base layer h pruned with
// key (PruneKey).
func (c *RegistryCache) GetPruned(ctx context.Context, h v1.Hash, key string) ([]byte, bool) {
	return c.get(ctx, entryKey{h: h, pruned: key})
}

func (c *RegistryCache) get(ctx context.Context, k entryKey) ([]byte, bool) {
	if !c.usable(ctx) {
		return nil, false
	}
	ref := c.cp.Repository().Tag(k.tag())
	desc, err := c.rc.Get(ctx, ref)
	if err != nil {
		return nil, false // absent, or unreadable: made from the base
	}
	b, err := c.readEntry(ctx, desc.Manifest, k)
	if err == nil {
		err = Check(b)
	}
	if err != nil {
		c.mu.Lock()
		c.refused[k] = true
		c.mu.Unlock()
		c.note(fmt.Sprintf("skeleton cache %s: ignoring the entry: %v; making the skeleton again", ref, err))
		return nil, false
	}
	c.mu.Lock()
	c.hits++
	c.bytes += int64(len(b))
	c.mu.Unlock()
	return b, true
}

// readEntry checks entry manifest raw against key k and reads its
// skeleton, whose digest it checks.
func (c *RegistryCache) readEntry(ctx context.Context, raw []byte, k entryKey) ([]byte, error) {
	h := k.h
	var m v1.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrEntry, err)
	}
	var at struct {
		ArtifactType string `json:"artifactType"`
	}
	_ = json.Unmarshal(raw, &at)
	switch {
	case at.ArtifactType != ArtifactType:
		return nil, fmt.Errorf("%w: artifactType %q, want %q", ErrEntry, at.ArtifactType, ArtifactType)
	case m.Annotations[AnnotationLayer] != h.String():
		return nil, fmt.Errorf("%w: filed under layer %s but made from %q", ErrEntry, h, m.Annotations[AnnotationLayer])
	case m.Annotations[AnnotationPruned] != k.pruned:
		return nil, fmt.Errorf("%w: prune key %q, want %q", ErrEntry, m.Annotations[AnnotationPruned], k.pruned)
	case m.Annotations[AnnotationFormat] != Format:
		return nil, fmt.Errorf("%w: skeleton format %q, want %q", ErrEntry, m.Annotations[AnnotationFormat], Format)
	case len(m.Layers) != 1 || m.Layers[0].MediaType != types.OCILayer:
		return nil, fmt.Errorf("%w: want one %s layer", ErrEntry, types.OCILayer)
	case m.Layers[0].Size <= 0 || m.Layers[0].Size > maxCachedSkeleton:
		return nil, fmt.Errorf("%w: a skeleton of %d bytes", ErrEntry, m.Layers[0].Size)
	}
	l, err := c.rc.Layer(ctx, c.cp.Repository().Digest(m.Layers[0].Digest.String()))
	if err != nil {
		return nil, err
	}
	rc, err := l.Compressed()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, m.Layers[0].Size+1))
	if err != nil {
		return nil, fmt.Errorf("%w: reading the skeleton: %w", ErrEntry, err)
	}
	if int64(len(b)) != m.Layers[0].Size {
		return nil, fmt.Errorf("%w: the skeleton has %d bytes, its descriptor says %d", ErrEntry, len(b), m.Layers[0].Size)
	}
	if got, _, err := v1.SHA256(bytes.NewReader(b)); err != nil || got != m.Layers[0].Digest {
		return nil, fmt.Errorf("%w: the skeleton's digest is not %s", ErrEntry, m.Layers[0].Digest)
	}
	return b, nil
}

// Check checks that b is a skeleton: a gzip tar whose entries all
// lie in the Windows layer layout (verify.LayerLayout, the rule verify
// --layers applies), whose regular files are empty but for keptFiles, and
// which keeps no hard link to one of those.
func Check(b []byte) error {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrEntry, err)
	}
	tr := tar.NewReader(zr)
	var layout verify.LayerLayout
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrEntry, err)
		}
		layout.Add(h.Name)
		if h.Size > 0 && (!keptFiles[h.Name] || h.Size > maxKeptFile) {
			return fmt.Errorf("%w: %s has content (%d bytes), which a skeleton does not carry", ErrEntry, h.Name, h.Size)
		}
		if h.Typeflag == tar.TypeLink && keptFiles[h.Name] {
			return fmt.Errorf("%w: %s is a hard link", ErrEntry, h.Name)
		}
	}
	if layout.Count > 0 {
		return fmt.Errorf("%w: %d entries outside the Windows layout (%v)", ErrEntry, layout.Count, layout.Bad)
	}
	return nil
}

// Put files skeleton b of base layer h in the cache: the skeleton blob,
// the empty config, and the entry's manifest under its tag. An entry
// already there is left alone, unless Get refused it: then it is
// replaced. A refused write turns the cache off, with a note; the build
// goes on.
func (c *RegistryCache) Put(ctx context.Context, h v1.Hash, b []byte) {
	c.putKey(ctx, entryKey{h: h}, b)
}

// PutPruned is Put of the placeholder layer of base layer h pruned with
// key (PruneKey).
func (c *RegistryCache) PutPruned(ctx context.Context, h v1.Hash, key string, b []byte) {
	c.putKey(ctx, entryKey{h: h, pruned: key}, b)
}

func (c *RegistryCache) putKey(ctx context.Context, k entryKey, b []byte) {
	if !c.usable(ctx) {
		return
	}
	h := k.h
	tag := c.cp.Repository().Tag(k.tag())
	c.mu.Lock()
	replace := c.refused[k]
	c.mu.Unlock()
	if !replace {
		if d, err := c.rc.Head(ctx, tag); err == nil && d != nil {
			return // another build filed it
		}
	}
	if err := c.put(ctx, tag, k, b); err != nil {
		c.mu.Lock()
		c.disable(fmt.Sprintf("filing the skeleton of %s failed (%v)", h, err))
		c.mu.Unlock()
	}
}

func (c *RegistryCache) put(ctx context.Context, tag name.Tag, k entryKey, b []byte) error {
	sd, _, err := v1.SHA256(bytes.NewReader(b))
	if err != nil {
		return err
	}
	if err := c.cp.UploadBytes(ctx, sd, b); err != nil {
		return err
	}
	cd, _, err := v1.SHA256(bytes.NewReader(emptyConfig))
	if err != nil {
		return err
	}
	// Every entry shares the 2-byte config: it is uploaded once per build.
	c.mu.Lock()
	uploaded := c.configUp
	c.mu.Unlock()
	if !uploaded {
		if err := c.cp.UploadBytes(ctx, cd, emptyConfig); err != nil {
			return err
		}
		c.mu.Lock()
		c.configUp = true
		c.mu.Unlock()
	}
	raw, err := entryManifest(k, v1.Descriptor{MediaType: types.OCILayer, Digest: sd, Size: int64(len(b))},
		v1.Descriptor{MediaType: types.MediaType("application/vnd.oci.empty.v1+json"), Digest: cd, Size: int64(len(emptyConfig))})
	if err != nil {
		return err
	}
	return c.cp.Put(ctx, tag, registry.RawManifest{Raw: raw, Type: types.OCIManifestSchema1})
}

// entryManifest is the manifest of cache entry k.
func entryManifest(k entryKey, skeleton, config v1.Descriptor) ([]byte, error) {
	ann := map[string]string{AnnotationLayer: k.h.String(), AnnotationFormat: Format}
	if k.pruned != "" {
		ann[AnnotationPruned] = k.pruned
	}
	// go-containerregistry's v1.Manifest has no artifactType (OCI 1.1).
	return json.Marshal(struct {
		SchemaVersion int               `json:"schemaVersion"`
		MediaType     types.MediaType   `json:"mediaType"`
		ArtifactType  string            `json:"artifactType"`
		Config        v1.Descriptor     `json:"config"`
		Layers        []v1.Descriptor   `json:"layers"`
		Annotations   map[string]string `json:"annotations"`
	}{2, types.OCIManifestSchema1, ArtifactType, config, []v1.Descriptor{skeleton}, ann})
}
