package regtest

import (
	"maps"
	"slices"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// FixtureTime is the fixed creation time of every fixture: configs, history
// entries and tar entries. It keeps digests stable across runs.
var FixtureTime = time.Date(2025, time.January, 1, 0, 0, 0, 0, time.UTC)

// ImageOption changes a fixture image.
type ImageOption func(*imageOptions)

type imageOptions struct {
	user            *string
	entrypoint      []string
	entrypointSet   bool
	cmd             []string
	cmdSet          bool
	configOSVersion *string
	osFeatures      []string
	annotations     map[string]string
	labels          map[string]string
	seed            string
	base            v1.Image
	docker          bool
}

func newImageOptions(opts []ImageOption) *imageOptions {
	o := &imageOptions{}
	for _, opt := range opts {
		opt(o)
	}
	return o
}

// WithUser sets the config's User.
func WithUser(u string) ImageOption {
	return func(o *imageOptions) { o.user = &u }
}

// WithEntrypoint sets the config's Entrypoint (nil clears it).
func WithEntrypoint(ep []string) ImageOption {
	return func(o *imageOptions) { o.entrypoint, o.entrypointSet = slices.Clone(ep), true }
}

// WithCmd sets the config's Cmd (nil clears it).
func WithCmd(cmd []string) ImageOption {
	return func(o *imageOptions) { o.cmd, o.cmdSet = slices.Clone(cmd), true }
}

// WithConfigOSVersion overrides the config's os.version, whatever the
// constructor argument or the base says; "" removes it. Use it to make the
// config disagree with an index descriptor.
func WithConfigOSVersion(v string) ImageOption {
	return func(o *imageOptions) { o.configOSVersion = &v }
}

// WithOSFeatures sets the config's os.features (e.g. "win32k").
func WithOSFeatures(f []string) ImageOption {
	return func(o *imageOptions) { o.osFeatures = slices.Clone(f) }
}

// WithAnnotations adds annotations to the image manifest.
func WithAnnotations(a map[string]string) ImageOption {
	return func(o *imageOptions) {
		if o.annotations == nil {
			o.annotations = map[string]string{}
		}
		maps.Copy(o.annotations, a)
	}
}

// WithLabel adds a label to the config.
func WithLabel(k, v string) ImageOption {
	return func(o *imageOptions) {
		if o.labels == nil {
			o.labels = map[string]string{}
		}
		o.labels[k] = v
	}
}

// WithSeed mixes seed into the layer contents so that otherwise equal
// fixtures get distinct digests.
func WithSeed(seed string) ImageOption {
	return func(o *imageOptions) { o.seed = seed }
}

// WithBase builds the fixture's app layer on top of base: the base's layers
// come first and unchanged, and os, architecture, variant and os.version come
// from the base config (the constructor's arguments are then ignored). The
// result keeps the base's manifest media type unless WithDockerMediaTypes is
// given. Base-image constructors ignore it.
func WithBase(base v1.Image) ImageOption {
	return func(o *imageOptions) { o.base = base }
}

// WithDockerMediaTypes gives the manifest, config and new layers Docker
// schema2 media types instead of OCI ones.
func WithDockerMediaTypes() ImageOption {
	return func(o *imageOptions) { o.docker = true }
}
