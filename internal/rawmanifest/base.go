package rawmanifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// ErrMediaType is returned by ReplaceBase for a manifest that is not an
// OCI or Docker schema 2 image, or a base layer whose media type has no
// equivalent in the manifest's family (LayerMediaType).
var ErrMediaType = errors.New("layer media type cannot be converted")

// Base is what ReplaceBase puts under an image's own layers.
type Base struct {
	// Layers are the base's layer descriptors, exact bytes as its own
	// manifest holds them; their media types are converted to the image's
	// family, nothing else changes.
	Layers []json.RawMessage
	// DiffIDs are the base's diff_ids, one per layer.
	DiffIDs []v1.Hash
	// History, when not nil, replaces the image's first OldHistory
	// history entries (exact bytes); nil keeps the history as it is.
	History []json.RawMessage
	// OS, when not nil, sets the config's os.version and os.features to
	// the base's (an empty value removes the key); nil keeps them.
	OS *OSFields
}

// OSFields are a config's Windows platform fields.
type OSFields struct {
	Version  string
	Features []string
}

// Replaced says how much of the image was its old base.
type Replaced struct {
	// Layers is the number of the image's bottom layers (and diff_ids)
	// that were the old base's.
	Layers int
	// History is the number of the image's first history entries that
	// were the old base's; used only with Base.History.
	History int
}

// Edited is the image ReplaceBase made: the exact bytes of its manifest
// and config.
type Edited struct {
	Manifest, Config []byte
}

// ReplaceBase moves an image onto another base without reading a layer,
// the edit a rebase and a graft both make: in the manifest, the old
// base's layer descriptors give way to b.Layers (media types converted to
// the manifest's family, digests unchanged), the image's own descriptors
// keep their bytes, and the config descriptor gets the new config's digest
// and size, every other field kept; annotations, when not nil, replace the
// manifest's annotations. In the config, rootfs.diff_ids become b.DiffIDs
// then the image's own, and b.History and b.OS apply. family is the
// manifest's media type as its index descriptor states it, for a manifest
// without a mediaType field. Every other byte of both documents stays
// where it was (see the package documentation). It checks only what it
// needs to edit: that the image has old.Layers layers, diff_ids and, with
// b.History, old.History history entries; whether they were the old
// base's is the caller's rule.
func ReplaceBase(manifest, config []byte, family types.MediaType, old Replaced, b Base, annotations map[string]string) (*Edited, error) {
	if len(b.Layers) != len(b.DiffIDs) {
		return nil, fmt.Errorf("the base has %d layers and %d diff_ids", len(b.Layers), len(b.DiffIDs))
	}
	cfg, err := replaceBaseConfig(config, old, b)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	m, err := replaceBaseManifest(manifest, family, old.Layers, b.Layers, cfg, annotations)
	if err != nil {
		return nil, err
	}
	return &Edited{Manifest: m, Config: cfg}, nil
}

func replaceBaseConfig(raw []byte, old Replaced, b Base) ([]byte, error) {
	var c struct {
		RootFS struct {
			DiffIDs []v1.Hash `json:"diff_ids"`
		} `json:"rootfs"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	ids := c.RootFS.DiffIDs
	if len(ids) < old.Layers {
		return nil, fmt.Errorf("%d diff_ids, fewer than the old base's %d layers", len(ids), old.Layers)
	}
	cfg, err := WithDiffIDs(raw, slices.Concat(b.DiffIDs, ids[old.Layers:]))
	if err != nil {
		return nil, err
	}
	repl := map[string]json.RawMessage{}
	if b.History != nil {
		var hist []json.RawMessage
		if h, err := Field(raw, "history"); err != nil {
			return nil, err
		} else if h != nil {
			if err := json.Unmarshal(h, &hist); err != nil {
				return nil, fmt.Errorf("reading history: %w", err)
			}
		}
		if len(hist) > 0 {
			if len(hist) < old.History {
				return nil, fmt.Errorf("%d history entries, fewer than the old base's %d", len(hist), old.History)
			}
			if repl["history"], err = Encode(slices.Concat(b.History, hist[old.History:])); err != nil {
				return nil, err
			}
		}
	}
	if b.OS != nil {
		repl["os.version"], repl["os.features"] = nil, nil
		if b.OS.Version != "" {
			repl["os.version"], _ = Encode(b.OS.Version)
		}
		if len(b.OS.Features) > 0 {
			repl["os.features"], _ = Encode(b.OS.Features)
		}
	}
	return ReplaceKeys(cfg, repl, "os.version", "os.features")
}

func replaceBaseManifest(raw []byte, family types.MediaType, oldLayers int, base []json.RawMessage, cfg []byte, annotations map[string]string) ([]byte, error) {
	var head struct {
		MediaType types.MediaType `json:"mediaType"`
		Layers    []json.RawMessage
		Config    json.RawMessage
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, fmt.Errorf("reading manifest: %w", err)
	}
	if head.MediaType != "" {
		family = head.MediaType
	}
	if family != types.OCIManifestSchema1 && family != types.DockerManifestSchema2 {
		return nil, fmt.Errorf("%w: image manifest %s", ErrMediaType, family)
	}
	if len(head.Layers) < oldLayers {
		return nil, fmt.Errorf("the manifest has %d layers, fewer than the old base's %d", len(head.Layers), oldLayers)
	}
	layers := make([]json.RawMessage, 0, len(base)+len(head.Layers)-oldLayers)
	for _, l := range base {
		var d struct {
			MediaType types.MediaType `json:"mediaType"`
		}
		if err := json.Unmarshal(l, &d); err != nil {
			return nil, fmt.Errorf("reading a base layer descriptor: %w", err)
		}
		mt, ok := LayerMediaType(d.MediaType, family)
		if !ok {
			return nil, fmt.Errorf("%w: %s in a %s manifest", ErrMediaType, d.MediaType, family)
		}
		if mt != d.MediaType {
			enc, _ := Encode(mt)
			var err error
			if l, err = ReplaceKeys(l, map[string]json.RawMessage{"mediaType": enc}); err != nil {
				return nil, err
			}
		}
		layers = append(layers, l)
	}
	layers = append(layers, head.Layers[oldLayers:]...)
	h, size, err := v1.SHA256(bytes.NewReader(cfg))
	if err != nil {
		return nil, err
	}
	d, _ := Encode(h)
	s, _ := Encode(size)
	cd, err := ReplaceKeys(head.Config, map[string]json.RawMessage{"digest": d, "size": s})
	if err != nil {
		return nil, fmt.Errorf("reading the config descriptor: %w", err)
	}
	repl := map[string]json.RawMessage{"config": cd}
	if repl["layers"], err = Encode(layers); err != nil {
		return nil, err
	}
	if annotations != nil {
		if repl["annotations"], err = Encode(annotations); err != nil {
			return nil, err
		}
	}
	return ReplaceKeys(raw, repl, "annotations")
}
