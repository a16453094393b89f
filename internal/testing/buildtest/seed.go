package buildtest

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Bases are the references SeedBases pushed, named like the real images.
type Bases struct {
	Golang         string // HOST/golang:1.26, linux/amd64
	Distroless     string // HOST/distroless/static:nonroot, index of linux/amd64 and linux/arm64
	Nanoserver2022 string // HOST/nanoserver:ltsc2022, os.version OSVersionLTSC2022
	Nanoserver2025 string // HOST/nanoserver:ltsc2025, os.version OSVersionLTSC2025
}

// BuildArgs returns the build args that point examples/hello's Dockerfile at
// these bases; windows selects the Windows base (Nanoserver2022 by default).
func (b Bases) BuildArgs(windows ...string) map[string]string {
	win := b.Nanoserver2022
	if len(windows) > 0 {
		win = windows[0]
	}
	return map[string]string{"GOLANG_IMAGE": b.Golang, "LINUX_BASE": b.Distroless, "WINDOWS_BASE": win}
}

// SeedBases builds the base images and pushes them to registryHost
// (host:port, plain HTTP on loopback), returning their references.
func SeedBases(registryHost string) (Bases, error) {
	b, err := SeedRuntimeBases(registryHost)
	if err != nil {
		return Bases{}, err
	}
	b.Golang = registryHost + "/golang:1.26"
	golang, err := GolangImage()
	if err != nil {
		return Bases{}, err
	}
	if err := push(b.Golang, golang); err != nil {
		return Bases{}, err
	}
	return b, nil
}

// SeedRuntimeBases pushes the bases an image of prebuilt binaries needs,
// the distroless-like and nanoserver-like ones, without the golang image
// (Bases.Golang stays empty): what SeedBases pushes but the toolchain.
func SeedRuntimeBases(registryHost string) (Bases, error) {
	b := Bases{
		Distroless:     registryHost + "/distroless/static:nonroot",
		Nanoserver2022: registryHost + "/nanoserver:ltsc2022",
		Nanoserver2025: registryHost + "/nanoserver:ltsc2025",
	}
	distroless, err := distrolessIndex()
	if err != nil {
		return Bases{}, err
	}
	ns2022, err := NanoserverLike(OSVersionLTSC2022)
	if err != nil {
		return Bases{}, err
	}
	ns2025, err := NanoserverLike(OSVersionLTSC2025)
	if err != nil {
		return Bases{}, err
	}
	for _, p := range []struct {
		ref string
		x   remote.Taggable
	}{{b.Distroless, distroless}, {b.Nanoserver2022, ns2022}, {b.Nanoserver2025, ns2025}} {
		if err := push(p.ref, p.x); err != nil {
			return Bases{}, err
		}
	}
	return b, nil
}

func distrolessIndex() (v1.ImageIndex, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, arch := range []string{"amd64", "arm64"} {
		img, err := DistrolessLike(arch)
		if err != nil {
			return nil, err
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: cf.Platform()},
		})
	}
	return idx, nil
}

func push(s string, x remote.Taggable) error {
	ref, err := name.ParseReference(s, name.Insecure)
	if err != nil {
		return fmt.Errorf("parsing reference %q: %w", s, err)
	}
	opts := []remote.Option{remote.WithContext(context.Background())}
	switch x := x.(type) {
	case v1.ImageIndex:
		err = remote.WriteIndex(ref, x, opts...)
	case v1.Image:
		err = remote.Write(ref, x, opts...)
	default:
		err = fmt.Errorf("cannot push %T", x)
	}
	if err != nil {
		return fmt.Errorf("pushing %s: %w", s, err)
	}
	return nil
}
