package buildtest

import (
	"fmt"

	"github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// Windows Server versions of the nanoserver-like bases that SeedBases pushes.
const (
	OSVersionLTSC2022 = regtest.OSVersionLTSC2022
	OSVersionLTSC2025 = regtest.OSVersionLTSC2025
)

// NanoserverLike returns a Windows base like mcr.microsoft.com's nanoserver:
// windows/amd64 with os.version osVersion, one layer in the real Windows
// layout (Files/ and Hives/ entries with MSWINDOWS PAX records) and User
// ContainerUser. It is regtest.WindowsBaseImage, the fixture the other tests
// use, so that both agree on what a Windows layer looks like.
func NanoserverLike(osVersion string) (v1.Image, error) {
	img, err := regtest.WindowsBaseImage(osVersion)
	if err != nil {
		return nil, fmt.Errorf("making nanoserver-like %s: %w", osVersion, err)
	}
	return img, nil
}
