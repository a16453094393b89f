package regtest

import (
	"fmt"
	"maps"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// platformImage returns an image without layers whose config carries p, with
// OCI media types unless docker is set.
func platformImage(p v1.Platform, docker bool) (v1.Image, error) {
	cf, err := empty.Image.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant, cf.OSVersion = p.OS, p.Architecture, p.Variant, p.OSVersion
	cf.OSFeatures = p.OSFeatures
	cf.Created = v1.Time{Time: FixtureTime}
	img, err := mutate.ConfigFile(empty.Image, cf)
	if err != nil {
		return nil, err
	}
	return withMediaTypes(img, docker), nil
}

func withMediaTypes(img v1.Image, docker bool) v1.Image {
	if docker {
		return mutate.ConfigMediaType(mutate.MediaType(img, types.DockerManifestSchema2), types.DockerConfigJSON)
	}
	return mutate.ConfigMediaType(mutate.MediaType(img, types.OCIManifestSchema1), types.OCIConfigJSON)
}

// layerMediaType returns the layer media type that matches img's manifest.
func layerMediaType(img v1.Image, docker bool) (types.MediaType, error) {
	if docker {
		return types.DockerLayer, nil
	}
	mt, err := img.MediaType()
	if err != nil {
		return "", err
	}
	if mt == types.DockerManifestSchema2 {
		return types.DockerLayer, nil
	}
	return types.OCILayer, nil
}

// layerSpec is a layer to append with its history.
type layerSpec struct {
	entries   []entry
	windows   bool
	createdBy string
	mediaType types.MediaType // "" means: match the manifest
	urls      func(v1.Layer) ([]string, error)
}

// appendLayers appends layers to base, then sets config defaults and options.
func appendLayers(base v1.Image, o *imageOptions, defaults func(*v1.Config), specs ...layerSpec) (v1.Image, error) {
	mt, err := layerMediaType(base, o.docker)
	if err != nil {
		return nil, err
	}
	var adds []mutate.Addendum
	for _, s := range specs {
		lmt := s.mediaType
		if lmt == "" {
			lmt = mt
		}
		l, err := newLayer(s.entries, s.windows, lmt)
		if err != nil {
			return nil, err
		}
		add := mutate.Addendum{Layer: l, History: v1.History{Created: v1.Time{Time: FixtureTime}, CreatedBy: s.createdBy}}
		if s.urls != nil {
			if add.URLs, err = s.urls(l); err != nil {
				return nil, err
			}
		}
		adds = append(adds, add)
	}
	img, err := mutate.Append(base, adds...)
	if err != nil {
		return nil, fmt.Errorf("appending layers: %w", err)
	}
	return finish(img, o, defaults)
}

// finish applies config defaults, then options, media types and annotations.
func finish(img v1.Image, o *imageOptions, defaults func(*v1.Config)) (v1.Image, error) {
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Created = v1.Time{Time: FixtureTime}
	if defaults != nil {
		defaults(&cf.Config)
	}
	if o.user != nil {
		cf.Config.User = *o.user
	}
	if o.entrypointSet {
		cf.Config.Entrypoint = o.entrypoint
	}
	if o.cmdSet {
		cf.Config.Cmd = o.cmd
	}
	if len(o.labels) > 0 {
		if cf.Config.Labels == nil {
			cf.Config.Labels = map[string]string{}
		}
		maps.Copy(cf.Config.Labels, o.labels)
	}
	if o.osFeatures != nil {
		cf.OSFeatures = o.osFeatures
	}
	if o.configOSVersion != nil {
		cf.OSVersion = *o.configOSVersion
	}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return nil, err
	}
	if o.docker {
		img = withMediaTypes(img, true)
	}
	if len(o.annotations) > 0 {
		img = mutate.Annotations(img, o.annotations).(v1.Image)
	}
	return img, nil
}
