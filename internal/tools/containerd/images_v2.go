//go:build !containerd1

package main

import (
	"context"

	"github.com/containerd/containerd/v2/core/content"
	"github.com/containerd/containerd/v2/core/images"
	"github.com/containerd/platforms"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// provider is memStore as containerd 2.x's content.Provider.
type provider struct{ memStore }

func (p provider) ReaderAt(_ context.Context, desc ocispec.Descriptor) (content.ReaderAt, error) {
	return p.reader(desc)
}

// manifest is containerd 2.x's images.Manifest.
func manifest(ctx context.Context, s memStore, index ocispec.Descriptor, mc platforms.MatchComparer) (ocispec.Manifest, error) {
	return images.Manifest(ctx, provider{s}, index, mc)
}
