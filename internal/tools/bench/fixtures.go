package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// Payload layer sizes added to every source image: incompressible, seeded
// bytes, so that a tool that copies layers instead of mounting them shows it
// in the byte counts.
const (
	runtimeLayerSize = 448 << 10
	appLayerSize     = 160 << 10
)

// platformSpec is the platform a source image's config carries.
type platformSpec struct {
	OS, Arch, Variant, OSVersion string
	OSFeatures                   []string
}

func (p platformSpec) String() string {
	s := p.OS + "/" + p.Arch
	if p.Variant != "" {
		s += "/" + p.Variant
	}
	if p.OSVersion != "" {
		s += ":" + p.OSVersion
	}
	return s
}

// tag is a tag name for a source image of this platform.
func (p platformSpec) tag() string {
	return strings.NewReplacer("/", "-", ":", "-").Replace(p.String())
}

// win is a windows platform with os.features win32k, as Windows Server images have.
func win(arch, osVersion string) platformSpec {
	return platformSpec{OS: "windows", Arch: arch, OSVersion: osVersion, OSFeatures: []string{"win32k"}}
}

func linux(arch, variant string) platformSpec {
	return platformSpec{OS: "linux", Arch: arch, Variant: variant}
}

// sourceImage builds the image a CI job would push for p: the regtest fixture
// for the OS (the Windows one has the real layer layout and os.version in its
// config), two seeded payload layers, the exact platform in the config, and
// manifest annotations.
func sourceImage(p platformSpec, seed string) (v1.Image, error) {
	var (
		img    v1.Image
		err    error
		prefix = "app/"
	)
	if p.OS == "windows" {
		prefix = "Files/app/"
		img, err = regtest.WindowsImage(p.OSVersion, regtest.WithSeed(seed))
	} else {
		img, err = regtest.LinuxImage(p.Arch, regtest.WithSeed(seed))
	}
	if err != nil {
		return nil, err
	}
	var adds []mutate.Addendum
	for _, l := range []struct {
		name string
		size int
	}{{"runtime.bin", runtimeLayerSize}, {"payload.bin", appLayerSize}} {
		layer, err := payloadLayer(prefix+l.name, seed+"/"+p.String()+"/"+l.name, l.size)
		if err != nil {
			return nil, err
		}
		adds = append(adds, mutate.Addendum{Layer: layer, History: v1.History{
			Created: v1.Time{Time: regtest.FixtureTime}, CreatedBy: "COPY " + l.name + " # buildkit",
		}})
	}
	if img, err = mutate.Append(img, adds...); err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant, cf.OSVersion = p.OS, p.Arch, p.Variant, p.OSVersion
	cf.OSFeatures = slices.Clone(p.OSFeatures)
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return nil, err
	}
	img = mutate.Annotations(img, map[string]string{
		"org.opencontainers.image.source":   "https://example.com/imgctl/bench",
		"org.opencontainers.image.revision": fmt.Sprintf("%x", sha256.Sum256([]byte(seed+p.String())))[:12],
		"org.opencontainers.image.title":    "bench " + p.String(),
	}).(v1.Image)
	return img, nil
}

// payloadLayer is a gzipped tar holding one file of n pseudo-random bytes
// derived from seed: the same seed always gives the same digest.
func payloadLayer(name, seed string, n int) (v1.Layer, error) {
	data := make([]byte, n)
	_, _ = rand.NewChaCha8(sha256.Sum256([]byte(seed))).Read(data)

	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	tw := tar.NewWriter(zw)
	if err := tw.WriteHeader(&tar.Header{
		Name: name, Mode: 0o644, Size: int64(n), ModTime: regtest.FixtureTime, Typeflag: tar.TypeReg,
	}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(data); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	gz := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(gz)), nil
	}, tarball.WithMediaType(types.OCILayer))
}
