// Package variant plans the solves of a build: one for every non-Windows
// platform together and one per Windows Server LTSC release, each Windows
// variant with its own base in the build arg WINDOWS_BASE (see package
// build for how the variants are built). It reads nothing and contacts
// nothing, so that imgctl lint checks the variants imgctl build would
// solve without the BuildKit driver.
package variant

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/lint"
	"github.com/imgctl/imgctl/platform"
)

// WindowsBaseArg is the build arg that carries each Windows variant's base;
// lint owns the name, since its preflight checks that Windows stages use it.
const WindowsBaseArg = lint.WindowsBaseArg

// DefaultWindowsBaseTemplate names the base of a Windows variant when
// neither WindowsBases nor WindowsBaseTemplate does.
const DefaultWindowsBaseTemplate = "mcr.microsoft.com/windows/nanoserver:{ltsc}"

// DefaultPlatforms are the platforms built when none are given.
var DefaultPlatforms = []v1.Platform{
	{OS: "linux", Architecture: "amd64"},
	{OS: "linux", Architecture: "arm64"},
	{OS: "windows", Architecture: "amd64"},
}

// ErrInvalidOptions is returned (wrapped) for build options that do not fit together.
var ErrInvalidOptions = errors.New("invalid build options")

// ErrNeedReleases is returned (wrapped, with ErrInvalidOptions) when
// several Windows platforms are built without Windows releases that tell
// their variants apart.
var ErrNeedReleases = errors.New("several Windows platforms need one Windows release each")

// ErrUnknownRelease is returned (wrapped, with ErrInvalidOptions) for a
// Windows release name that is not an LTSC release imgctl knows.
var ErrUnknownRelease = errors.New("unknown Windows release")

// ErrBaseNotBuilt is returned (wrapped, with ErrInvalidOptions) for a
// Windows base given for a release that is not built.
var ErrBaseNotBuilt = errors.New("a Windows base for a release that is not built")

// ErrReleasesWithoutWindows is returned (wrapped, with ErrInvalidOptions)
// when Windows releases are named but windows/amd64 is not among the
// platforms.
var ErrReleasesWithoutWindows = errors.New("Windows releases need windows/amd64 among the platforms")

// Variant is one solve: every non-Windows platform together, or one
// Windows release.
type Variant struct {
	// Name is "linux" for the non-Windows solve, else the LTSC release
	// (ltsc2022), or "windows" for a Windows solve without a release. A
	// scale-out build that splits the linux solve over several nodes names
	// the parts linux-amd64, linux-arm64... (see package build/nodes).
	Name string
	// Release is the Windows release; zero for the non-Windows solve.
	Release platform.Release
	// Platforms are the solve's target platforms.
	Platforms []v1.Platform
	// BuildArgs are the build args of this solve, WINDOWS_BASE included
	// for a Windows release.
	BuildArgs map[string]string
}

// IsWindows reports whether the variant builds Windows.
func (v Variant) IsWindows() bool { return len(v.Platforms) > 0 && v.Platforms[0].OS == "windows" }

// WindowsPlatform returns the platform of release r's variant:
// windows/amd64 with os.version 10.0.BUILD. Preflight, base resolution and
// verify use the build; the solve itself asks for the base's full
// os.version (see package build).
func WindowsPlatform(r platform.Release) v1.Platform {
	return v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: fmt.Sprintf("10.0.%d", r.Build)}
}

// VariantOptions say which variants to build.
type VariantOptions struct {
	// Platforms are the target platforms; empty means DefaultPlatforms.
	Platforms []v1.Platform
	// Windows are LTSC release names (ltsc2022, ltsc2025): one Windows
	// variant each. Empty means one windows/amd64 variant when Platforms
	// has Windows, built from the Dockerfile's default WINDOWS_BASE.
	Windows []string
	// WindowsBases maps a release name to its base reference.
	WindowsBases map[string]string
	// WindowsBaseTemplate names bases by release: {ltsc} is replaced.
	WindowsBaseTemplate string
	// BuildArgs are the build args every variant gets.
	BuildArgs map[string]string
}

// PlanVariants splits a build into solves. A Windows variant's base is
// WindowsBases[release], else WindowsBaseTemplate with {ltsc} replaced,
// else, with one release, the WINDOWS_BASE build arg, else
// DefaultWindowsBaseTemplate.
func PlanVariants(o VariantOptions) ([]Variant, error) {
	plats := o.Platforms
	if len(plats) == 0 {
		plats = DefaultPlatforms
	}
	var other []v1.Platform
	var windows []v1.Platform
	for _, p := range plats {
		if p.OS == "windows" {
			windows = append(windows, p)
		} else if !slices.ContainsFunc(other, func(q v1.Platform) bool { return q.Equals(p) }) {
			other = append(other, p)
		}
	}
	var out []Variant
	if len(other) > 0 {
		out = append(out, Variant{Name: "linux", Platforms: other, BuildArgs: maps.Clone(o.BuildArgs)})
	}
	releases, err := windowsReleases(o.Windows, windows)
	if err != nil {
		return nil, err
	}
	if len(releases) == 0 {
		if len(windows) > 1 {
			return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, ErrNeedReleases)
		}
		if len(windows) == 1 {
			out = append(out, Variant{Name: "windows", Platforms: windows, BuildArgs: maps.Clone(o.BuildArgs)})
		}
		return out, checkBases(o.WindowsBases, nil)
	}
	for _, r := range releases {
		args := maps.Clone(o.BuildArgs)
		if args == nil {
			args = map[string]string{}
		}
		args[WindowsBaseArg] = windowsBase(o, r, len(releases))
		out = append(out, Variant{Name: r.Name, Release: r, Platforms: []v1.Platform{WindowsPlatform(r)}, BuildArgs: args})
	}
	return out, checkBases(o.WindowsBases, releases)
}

// windowsReleases resolves release names, and Windows platforms with an
// os.version, to LTSC releases.
func windowsReleases(names []string, windows []v1.Platform) ([]platform.Release, error) {
	var out []platform.Release
	add := func(r platform.Release) {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	for _, n := range names {
		r, ok := ReleaseByName(n)
		if !ok {
			return nil, fmt.Errorf("%w: %w %q: want %s", ErrInvalidOptions, ErrUnknownRelease, n, strings.Join(releaseNames(), ", "))
		}
		add(r)
	}
	for _, p := range windows {
		if p.OSVersion == "" {
			continue
		}
		b, ok := platform.Build(p.OSVersion)
		r, known := platform.ReleaseForBuild(b)
		if !ok || !known {
			return nil, fmt.Errorf("%w: platform %s is not an LTSC release", ErrInvalidOptions, platform.Format(p))
		}
		add(r)
	}
	if len(out) > 0 && len(windows) == 0 && len(names) > 0 {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, ErrReleasesWithoutWindows)
	}
	return out, nil
}

func windowsBase(o VariantOptions, r platform.Release, n int) string {
	if b := o.WindowsBases[r.Name]; b != "" {
		return b
	}
	if o.WindowsBaseTemplate != "" {
		return strings.ReplaceAll(o.WindowsBaseTemplate, "{ltsc}", r.Name)
	}
	if b := o.BuildArgs[WindowsBaseArg]; b != "" && n == 1 {
		return b
	}
	return strings.ReplaceAll(DefaultWindowsBaseTemplate, "{ltsc}", r.Name)
}

// checkBases refuses bases (VariantOptions.WindowsBases) for releases that
// are not built.
func checkBases(bases map[string]string, releases []platform.Release) error {
	for name := range bases {
		if !slices.ContainsFunc(releases, func(r platform.Release) bool { return r.Name == name }) {
			return fmt.Errorf("%w: %w: %s", ErrInvalidOptions, ErrBaseNotBuilt, name)
		}
	}
	return nil
}

// ReleaseByName returns the LTSC release named n (ltsc2022, ltsc2025),
// ignoring case and surrounding space.
func ReleaseByName(n string) (platform.Release, bool) {
	n = strings.ToLower(strings.TrimSpace(n))
	for _, r := range platform.Releases {
		if r.Name == n {
			return r, true
		}
	}
	return platform.Release{}, false
}

func releaseNames() []string {
	var names []string
	for _, r := range platform.Releases {
		names = append(names, r.Name)
	}
	return names
}
