//go:build !containerd1

package main

import (
	"github.com/containerd/containerd/v2/core/content"
	"github.com/containerd/containerd/v2/core/images"
)

// contentReaderAt is containerd 2.x's content.ReaderAt.
type contentReaderAt = content.ReaderAt

// imagesManifest is containerd 2.x's images.Manifest.
var imagesManifest = images.Manifest
