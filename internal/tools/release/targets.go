package release

import (
	"fmt"
	"slices"
	"strings"
)

// Target is one platform a release ships a binary for.
type Target struct {
	// OS and Arch are GOOS and GOARCH.
	OS, Arch string
}

// Targets returns the platforms of a release: the binaries of the archives,
// and (Linux and Windows) of the image.
func Targets() []Target {
	return []Target{{"linux", "amd64"}, {"linux", "arm64"}, {"windows", "amd64"}, {"darwin", "arm64"}}
}

// ParseTargets reads a comma-separated list of os/arch, each one of
// Targets().
func ParseTargets(list string) ([]Target, error) {
	var out []Target
	for _, s := range strings.Split(list, ",") {
		os, arch, _ := strings.Cut(strings.TrimSpace(s), "/")
		t := Target{os, arch}
		if !slices.Contains(Targets(), t) {
			return nil, fmt.Errorf("release target %q: want one of %v", s, Targets())
		}
		out = append(out, t)
	}
	return out, nil
}

// String is os/arch.
func (t Target) String() string { return t.OS + "/" + t.Arch }

// Binary is the executable's file name: imgctl, imgctl.exe on Windows.
func (t Target) Binary() string {
	if t.OS == "windows" {
		return "imgctl.exe"
	}
	return "imgctl"
}

// Dir is the directory, relative to the build output, that holds the
// target's binary: os_arch. release/Dockerfile copies from there.
func (t Target) Dir() string { return t.OS + "_" + t.Arch }

// ArchiveName is the name of the target's release archive:
// imgctl_<version>_<os>_<arch>.tar.gz, .zip for Windows, with the version
// without its leading "v" (imgctl_1.2.0_linux_amd64.tar.gz for tag v1.2.0),
// as goreleaser names them. The install action (scripts/action) downloads
// exactly these names: do not change them.
func ArchiveName(version string, t Target) string {
	ext := ".tar.gz"
	if t.OS == "windows" {
		ext = ".zip"
	}
	return fmt.Sprintf("imgctl_%s_%s_%s%s", strings.TrimPrefix(version, "v"), t.OS, t.Arch, ext)
}

// ChecksumsName is the file that lists the sha256 of every archive.
const ChecksumsName = "checksums.txt"

// NotesName is the release notes file.
const NotesName = "RELEASE_NOTES.md"
