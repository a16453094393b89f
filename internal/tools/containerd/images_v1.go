//go:build containerd1

package main

import (
	"github.com/containerd/containerd/content"
	"github.com/containerd/containerd/images"
)

// contentReaderAt is containerd 1.7's content.ReaderAt.
type contentReaderAt = content.ReaderAt

// imagesManifest is containerd 1.7's images.Manifest.
var imagesManifest = images.Manifest
