package regtest

import (
	"errors"
	"fmt"
	"maps"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/partial"
)

// Windows versions used by MultiOSIndex: realistic current revisions of
// Windows Server 2022 (ltsc2022) and Windows Server 2025 (ltsc2025).
const (
	OSVersionLTSC2022 = "10.0.20348.4297"
	OSVersionLTSC2025 = "10.0.26100.6584"
)

// ErrBadEntry is returned by Index for an Entry that has neither or both of
// Image and Index.
var ErrBadEntry = errors.New("entry needs exactly one of Image and Index")

// Entry is one child of an index built by Index.
type Entry struct {
	// Image or Index is the child; set exactly one.
	Image v1.Image
	Index v1.ImageIndex

	// Platform is the descriptor platform. When nil, it is filled from the
	// image config (os, architecture, variant, os.version and os.features),
	// as ko and BuildKit do; a child index then gets no platform.
	Platform *v1.Platform
	// NoPlatform leaves the descriptor platform nil.
	NoPlatform bool
	// OmitOSVersion drops os.version from the descriptor platform, as
	// `docker buildx imagetools create` does for single-manifest sources.
	OmitOSVersion bool
	// Annotations are the descriptor annotations.
	Annotations map[string]string
}

// Index builds an OCI image index of entries, in order.
func Index(entries ...Entry) (v1.ImageIndex, error) {
	adds := make([]mutate.IndexAddendum, 0, len(entries))
	for i, e := range entries {
		add, err := e.addendum()
		if err != nil {
			return nil, fmt.Errorf("index entry %d: %w", i, err)
		}
		adds = append(adds, add)
	}
	return mutate.AppendManifests(empty.Index, adds...), nil
}

func (e Entry) addendum() (mutate.IndexAddendum, error) {
	var child mutate.Appendable
	switch {
	case (e.Image == nil) == (e.Index == nil):
		return mutate.IndexAddendum{}, ErrBadEntry
	case e.Image != nil:
		child = plainImage{e.Image}
	default:
		child = plainIndex{e.Index}
	}
	desc, err := partial.Descriptor(child)
	if err != nil {
		return mutate.IndexAddendum{}, fmt.Errorf("describing child: %w", err)
	}
	desc.Platform, desc.Annotations = nil, maps.Clone(e.Annotations)
	if !e.NoPlatform {
		if desc.Platform, err = e.platform(); err != nil {
			return mutate.IndexAddendum{}, err
		}
	}
	return mutate.IndexAddendum{Add: child, Descriptor: *desc}, nil
}

// plainImage and plainIndex hide the artifactType that go-containerregistry
// (v0.22) otherwise copies from the config media type into every descriptor;
// BuildKit writes none for images.
type plainImage struct{ v1.Image }

func (plainImage) ArtifactType() (string, error) { return "", nil }

// indexAlias names the embedded field so that it does not shadow the
// promoted ImageIndex method, as a field named ImageIndex would.
type indexAlias = v1.ImageIndex

type plainIndex struct{ indexAlias }

var _ v1.ImageIndex = plainIndex{}

func (plainIndex) ArtifactType() (string, error) { return "", nil }

// platform returns a copy of the descriptor platform for e.
func (e Entry) platform() (*v1.Platform, error) {
	var p *v1.Platform
	switch {
	case e.Platform != nil:
		p = e.Platform
	case e.Image != nil:
		cf, err := e.Image.ConfigFile()
		if err != nil {
			return nil, fmt.Errorf("reading config: %w", err)
		}
		p = cf.Platform()
	}
	if p == nil {
		return nil, nil
	}
	cp := *p
	cp.OSFeatures = append([]string(nil), p.OSFeatures...)
	cp.Features = append([]string(nil), p.Features...)
	if len(cp.OSFeatures) == 0 {
		cp.OSFeatures = nil
	}
	if len(cp.Features) == 0 {
		cp.Features = nil
	}
	if e.OmitOSVersion {
		cp.OSVersion = ""
	}
	return &cp, nil
}

// MultiOSIndex returns a typical good index as BuildKit pushes it:
// linux/amd64, linux/arm64/v8, windows/amd64 OSVersionLTSC2025 and
// windows/amd64 OSVersionLTSC2022, every descriptor with the config's
// platform, followed by one attestation manifest per image.
func MultiOSIndex() (v1.ImageIndex, error) {
	var imgs []v1.Image
	for _, f := range []func() (v1.Image, error){
		func() (v1.Image, error) { return LinuxImage("amd64") },
		func() (v1.Image, error) { return LinuxImage("arm64") },
		func() (v1.Image, error) { return WindowsImage(OSVersionLTSC2025) },
		func() (v1.Image, error) { return WindowsImage(OSVersionLTSC2022) },
	} {
		img, err := f()
		if err != nil {
			return nil, err
		}
		imgs = append(imgs, img)
	}
	entries := make([]Entry, 0, 2*len(imgs))
	for _, img := range imgs {
		entries = append(entries, Entry{Image: img})
	}
	for _, img := range imgs {
		e, err := AttestationEntry(img)
		if err != nil {
			return nil, err
		}
		entries = append(entries, e)
	}
	return Index(entries...)
}
