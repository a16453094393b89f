package index

import (
	"fmt"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/snapshot"
)

// Entry is one child of the index being built.
type Entry struct {
	// Descriptor is the descriptor as it is written into the index, its
	// platform filled from the config where needed.
	Descriptor v1.Descriptor
	// Source is where the manifest is read: repository@digest.
	Source name.Digest
	// From is the source reference as given.
	From name.Reference
	// SourceIndex is the position of the source in the list given; Child is
	// the position in an index source (0 for an image source).
	SourceIndex, Child int
	// Created is the config's creation time, zero until the config is read.
	Created time.Time

	mu       sync.Mutex
	image    v1.Image      // set for image sources, read lazily for index children
	parent   v1.ImageIndex // the index a child was read from
	inTarget bool          // read from the target repository, so present there
}

// IsAttestation reports whether the entry is a BuildKit attestation manifest.
func (e *Entry) IsAttestation() bool {
	return snapshot.IsAttestation(e.Descriptor)
}

// Subject returns the digest an attestation refers to.
func (e *Entry) Subject() (v1.Hash, bool) {
	return snapshot.Subject(e.Descriptor)
}

// String names the entry for notes: platform, digest and source.
func (e *Entry) String() string {
	p := platform.FormatPtr(e.Descriptor.Platform)
	if e.IsAttestation() {
		p = "attestation"
	}
	return fmt.Sprintf("%s %s from %s", p, e.Descriptor.Digest, e.From)
}

// img returns the child image, fetching its manifest on first use.
func (e *Entry) img() (v1.Image, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.image != nil {
		return e.image, nil
	}
	if e.parent == nil || !e.Descriptor.MediaType.IsImage() {
		return nil, fmt.Errorf("%s: %w %q", e.Source, registry.ErrUnsupportedMediaType, e.Descriptor.MediaType)
	}
	img, err := e.parent.Image(e.Descriptor.Digest)
	if err != nil {
		return nil, fmt.Errorf("fetching manifest %s: %w", e.Source, err)
	}
	e.image = img
	return img, nil
}

// config reads the image config and records its creation time.
func (e *Entry) config() (*v1.ConfigFile, error) {
	img, err := e.img()
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("reading config of %s: %w", e.Source, err)
	}
	e.Created = cf.Created.Time
	return cf, nil
}

// isWindows reports whether the descriptor platform is Windows.
func (e *Entry) isWindows() bool {
	return e.Descriptor.Platform != nil && e.Descriptor.Platform.OS == "windows"
}

// position orders entries as they were given.
func (e *Entry) position() [2]int { return [2]int{e.SourceIndex, e.Child} }
