package snapshot

import (
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Entry is one child of an index with what verify read of it.
type Entry struct {
	Descriptor v1.Descriptor
	// Manifest and Config are nil for attestations and nested indexes,
	// which verify does not open.
	Manifest *v1.Manifest
	Config   *v1.ConfigFile
}

// IsAttestation reports whether the entry is a BuildKit attestation
// manifest.
func (e Entry) IsAttestation() bool {
	return IsAttestation(e.Descriptor)
}

// ConfigPlatform returns the platform the image config declares, or nil.
func (e Entry) ConfigPlatform() *v1.Platform {
	if e.Config == nil {
		return nil
	}
	p := e.Config.Platform()
	return p
}

// Platform returns the platform engines judge the entry by: the
// descriptor's, or the config's when the descriptor has none.
func (e *Entry) Platform() *v1.Platform {
	if e.Descriptor.Platform != nil {
		return e.Descriptor.Platform
	}
	return e.ConfigPlatform()
}

// OSVersion returns the os.version of Platform, or "".
func (e *Entry) OSVersion() string {
	if p := e.Platform(); p != nil {
		return p.OSVersion
	}
	return ""
}

// Snapshot is everything verify reads of a reference.
type Snapshot struct {
	Digest v1.Hash
	// Index is nil when the reference is a single manifest.
	Index   *v1.IndexManifest
	Entries []Entry
}
