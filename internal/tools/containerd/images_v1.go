//go:build containerd1

package main

import (
	"context"

	"github.com/containerd/containerd/content"
	"github.com/containerd/containerd/images"
	"github.com/containerd/platforms"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// provider is memStore as containerd 1.7's content.Provider. This file
// mirrors images_v2.go line for line: the two differ only in the import
// paths of content and images, which a build tag chooses, because each
// release module links just one containerd line.
type provider struct{ memStore }

func (p provider) ReaderAt(_ context.Context, desc ocispec.Descriptor) (content.ReaderAt, error) {
	return p.reader(desc)
}

// manifest is containerd 1.7's images.Manifest.
func manifest(ctx context.Context, s memStore, index ocispec.Descriptor, mc platforms.MatchComparer) (ocispec.Manifest, error) {
	return images.Manifest(ctx, provider{s}, index, mc)
}
