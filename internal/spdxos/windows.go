package spdxos

import (
	"fmt"
	"path"
	"strings"

	"github.com/distribution/reference"
	"github.com/package-url/packageurl-go"

	"github.com/imgctl/imgctl/platform"
)

// Windows is what AddWindows records of a Windows image.
type Windows struct {
	// OSVersion is the image config's os.version, 10.0.BUILD.REV (the
	// base's: BuildKit copies it).
	OSVersion string
	// Architecture is the image's, e.g. amd64.
	Architecture string
	// Base is the base reference as the build named it, e.g.
	// mcr.microsoft.com/windows/nanoserver:ltsc2022.
	Base string
	// BaseDigest is the digest the base was pinned to (the
	// org.opencontainers.image.base.digest annotation's), sha256:....
	BaseDigest string
}

// Product is the Windows product a base repository holds, by the last
// element of its path as Microsoft names its repositories
// (mcr.microsoft.com/windows/servercore, .../nanoserver, .../server, and
// mcr.microsoft.com/windows). Any other repository (an image built on one
// of those) is "Windows Server", which every Windows container base is.
func Product(base string) string {
	switch strings.ToLower(path.Base(baseName(base))) {
	case "nanoserver":
		return "Nano Server"
	case "servercore":
		return "Windows Server Core"
	case "server":
		return "Windows Server"
	case "windows":
		return "Windows"
	}
	return "Windows Server"
}

// cpeProducts are NVD's CPE product names of Windows Server releases that
// are not LTSC releases of package platform (Annual and Semi-Annual
// Channel), by build. The LTSC ones are platform.Releases' Server names.
var cpeProducts = map[uint32]string{
	18363: "windows_server_1909",
	19041: "windows_server_2004",
	19042: "windows_server_20h2",
	25398: "windows_server_23h2",
}

// CPE is the CPE 2.3 name of the Windows Server release at osVersion,
// with the full version (NVD matches Windows Server CVEs by version
// ranges of 10.0.BUILD.REV on these names, e.g.
// cpe:2.3:o:microsoft:windows_server_2022:10.0.20348.2340:*:*:*:*:*:*:*).
// false for a version that is not 10.0.BUILD.REV or a build without a
// known release: no name is guessed.
func CPE(osVersion string) (string, bool) {
	if strings.Count(osVersion, ".") != 3 {
		return "", false
	}
	b, ok := platform.Build(osVersion)
	if !ok {
		return "", false
	}
	product, ok := cpeProducts[b]
	if r, lts := platform.ReleaseForBuild(b); lts {
		product, ok = strings.ToLower(strings.ReplaceAll(r.Server, " ", "_")), true
	}
	if !ok {
		return "", false
	}
	return fmt.Sprintf("cpe:2.3:o:microsoft:%s:%s:*:*:*:*:*:*:*", product, osVersion), true
}

// PURL is the pkg:oci package URL of the base at its digest, as Syft
// writes an image's (name: the repository's last element; qualifiers:
// arch, repository_url, tag).
func PURL(w Windows) (string, error) {
	named, err := reference.ParseNormalizedNamed(w.Base)
	if err != nil {
		return "", fmt.Errorf("base %q: %w", w.Base, err)
	}
	q := packageurl.Qualifiers{}
	if w.Architecture != "" {
		q = append(q, packageurl.Qualifier{Key: "arch", Value: w.Architecture})
	}
	q = append(q, packageurl.Qualifier{Key: "repository_url", Value: reference.TrimNamed(named).String()})
	if t, ok := named.(reference.Tagged); ok {
		q = append(q, packageurl.Qualifier{Key: "tag", Value: t.Tag()})
	}
	name := strings.ToLower(path.Base(reference.Path(named)))
	return packageurl.NewPackageURL("oci", "", name, w.BaseDigest, q, "").ToString(), nil
}
