package rebase

import (
	"bytes"
	"encoding/json"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/imgctl/imgctl/internal/rawmanifest"
	"github.com/imgctl/imgctl/snapshot"
)

// rewriteManifest puts the new base's layer descriptors (media types
// converted to the image's family, digests unchanged) before the image's
// own layer descriptors (kept byte for byte), points the config descriptor
// at cfg, and records the new base in the annotations: base.digest is
// updated, and base.name and base.digest are added when the base came from
// the descriptor or from Options.Bases, so that the next run finds them.
func rewriteManifest(v *variant, p parts, n int, cfg []byte) ([]byte, error) {
	family := p.app.manifest.MediaType
	if family == "" {
		family = p.app.desc.MediaType
	}
	if family != types.OCIManifestSchema1 && family != types.DockerManifestSchema2 {
		return nil, fmt.Errorf("%w: image manifest %s", ErrMediaType, family)
	}
	var appLayers, baseLayers []json.RawMessage
	for _, x := range []struct {
		raw []byte
		dst *[]json.RawMessage
	}{{p.app.raw, &appLayers}, {p.new.raw, &baseLayers}} {
		l, err := rawmanifest.Field(x.raw, "layers")
		if err == nil {
			err = json.Unmarshal(l, x.dst)
		}
		if err != nil {
			return nil, fmt.Errorf("reading layers: %w", err)
		}
	}
	for i, d := range p.new.manifest.Layers {
		mt, err := layerMediaType(d.MediaType, family)
		if err != nil {
			return nil, err
		}
		if mt != d.MediaType {
			enc, _ := rawmanifest.Encode(mt)
			if baseLayers[i], err = rawmanifest.ReplaceKeys(baseLayers[i], map[string]json.RawMessage{"mediaType": enc}); err != nil {
				return nil, err
			}
		}
	}
	layers, err := rawmanifest.Encode(append(baseLayers, appLayers[n:]...))
	if err != nil {
		return nil, err
	}
	cd, err := configDescriptor(p.app.raw, cfg)
	if err != nil {
		return nil, err
	}
	ann := map[string]string{}
	for k, val := range p.app.manifest.Annotations {
		ann[k] = val
	}
	if ann[snapshot.AnnotationBaseName] == "" {
		ann[snapshot.AnnotationBaseName] = v.BaseName
	}
	ann[snapshot.AnnotationBaseDigest] = p.new.desc.Digest.String()
	annRaw, err := rawmanifest.Encode(ann)
	if err != nil {
		return nil, err
	}
	return rawmanifest.ReplaceKeys(p.app.raw, map[string]json.RawMessage{"config": cd, "layers": layers, "annotations": annRaw}, "annotations")
}

// configDescriptor is the manifest's config descriptor with the digest and
// size of cfg; its media type and any other field are kept.
func configDescriptor(manifest, cfg []byte) (json.RawMessage, error) {
	raw, err := rawmanifest.Field(manifest, "config")
	if err != nil {
		return nil, err
	}
	h, size, err := v1.SHA256(bytes.NewReader(cfg))
	if err != nil {
		return nil, err
	}
	d, _ := rawmanifest.Encode(h)
	s, _ := rawmanifest.Encode(size)
	return rawmanifest.ReplaceKeys(raw, map[string]json.RawMessage{"digest": d, "size": s})
}
