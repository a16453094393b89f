package platform

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ErrUnknownRelease is returned for an engine release imgctl has no profile
// for, or cannot read.
var ErrUnknownRelease = errors.New("unknown engine release")

// Containerd17 is the old name of the containerd-legacy profile, kept as a
// deprecated alias.
const Containerd17 = "containerd-1.7"

// ReleaseRange is a run of releases of one engine that behave as one
// profile.
type ReleaseRange struct {
	// Engine is "containerd", "docker" or "docker+containerd-store".
	Engine string
	// From and To bound the range, inclusive; To is empty for "and later".
	From, To [3]int
	// Profile is the profile the range runs.
	Profile string
	// Platforms is the github.com/containerd/platforms version the range
	// pins, or "" for Docker's classic store.
	Platforms string
}

// open marks a range with no upper bound.
var open = [3]int{-1}

// Ranges lists every release range imgctl models, from each release tag's
// go.mod (docs/engines.md gives the sources).
var Ranges = []ReleaseRange{
	{"containerd", [3]int{1, 7, 19}, [3]int{1, 7, 999}, ContainerdLegacy, "v0.2.1"},
	{"containerd", [3]int{2, 0, 0}, [3]int{2, 0, 1}, ContainerdIndexOrder, "v1.0.0-rc.0"},
	{"containerd", [3]int{2, 0, 2}, [3]int{2, 1, 5}, ContainerdIndexOrder, "v1.0.0-rc.1"},
	{"containerd", [3]int{2, 1, 6}, [3]int{2, 2, 999}, ContainerdLTSCFloor, "v1.0.0-rc.2"},
	{"containerd", [3]int{2, 3, 0}, [3]int{2, 3, 999}, ContainerdOSFeatures, "v1.0.0-rc.4"},
	{"containerd", [3]int{2, 4, 0}, [3]int{2, 999, 999}, Containerd, "v1.0.0-rc.5"},
	{"docker", [3]int{25, 0, 0}, open, Docker, ""},
	{"docker+containerd-store", [3]int{27, 0, 0}, [3]int{27, 999, 999}, ContainerdLegacy, "v0.2.1"},
	{"docker+containerd-store", [3]int{28, 0, 0}, [3]int{28, 999, 999}, ContainerdIndexOrder, "v1.0.0-rc.1"},
	{"docker+containerd-store", [3]int{29, 0, 0}, [3]int{29, 5, 999}, DockerStoreLTSCFloor, "v1.0.0-rc.2"},
	{"docker+containerd-store", [3]int{29, 6, 0}, open, DockerStoreOSFeatures, "v1.0.0-rc.4"},
}

// String names the range as a finding does: "containerd 2.0.0–2.1.5",
// "containerd 1.7.19–1.7.x", "containerd 2.4.0–2.x", "docker ≥ 25.0.0".
func (r ReleaseRange) String() string {
	name := strings.Replace(r.Engine, "+containerd-store", " (containerd store)", 1)
	from := fmt.Sprintf("%d.%d.%d", r.From[0], r.From[1], r.From[2])
	switch {
	case r.To == open:
		return fmt.Sprintf("%s ≥ %s", name, from)
	case r.To[1] == 999:
		return fmt.Sprintf("%s %s–%d.x", name, from, r.To[0])
	case r.To[2] == 999:
		return fmt.Sprintf("%s %s–%d.%d.x", name, from, r.To[0], r.To[1])
	}
	return fmt.Sprintf("%s %s–%d.%d.%d", name, from, r.To[0], r.To[1], r.To[2])
}

func (r ReleaseRange) contains(v [3]int) bool {
	return slices.Compare(v[:], r.From[:]) >= 0 && (r.To == open || slices.Compare(v[:], r.To[:]) <= 0)
}

// RangesOf names the release ranges that run any of the profiles, merging
// neighbours, as a finding prints them: RangesOf("containerd-legacy",
// "containerd-index-order") is "containerd 1.7.19–2.1.5".
func RangesOf(profiles ...string) string {
	return rangesOf("", profiles)
}

// PrimaryRanges names the ranges of a profile's own engine (containerd for
// the containerd lines, Docker's containerd store for docker-store-*,
// docker for docker), as a row of verify's table prints them.
func PrimaryRanges(profile string) string {
	for _, r := range Ranges {
		if r.Profile == profile {
			return rangesOf(r.Engine, []string{profile})
		}
	}
	return ""
}

// rangesOf is RangesOf for the ranges of engine only ("" for every
// engine).
func rangesOf(engine string, profiles []string) string {
	var parts []string
	var cur *ReleaseRange
	for _, r := range Ranges {
		if engine != "" && r.Engine != engine {
			continue
		}
		in := slices.Contains(profiles, r.Profile)
		if cur != nil && (!in || cur.Engine != r.Engine) {
			parts = append(parts, cur.String())
			cur = nil
		}
		if !in {
			continue
		}
		if cur == nil {
			c := r
			cur = &c
		}
		cur.To = r.To
	}
	if cur != nil {
		parts = append(parts, cur.String())
	}
	return strings.Join(parts, ", ")
}

// Tier is the position in the engine's platform vector of the first
// platform that accepts image on host (0 for the host's own architecture,
// 1 for windows/386 under platforms.Only), or -1 when none does. Engines
// other than the containerd profiles have one tier.
func Tier(e Engine, host, image Platform) int {
	if p, ok := e.(ContainerdProfile); ok {
		return p.tier(host, image)
	}
	if e.Match(host, image) {
		return 0
	}
	return -1
}

// SupportedReleases lists the ranges, for usage errors and help.
func SupportedReleases() string {
	var parts []string
	for _, r := range Ranges {
		parts = append(parts, r.String())
	}
	return strings.Join(parts, "; ")
}

// ParseReleaseVersion reads an engine release as nodes and users write it:
// "2.0.4", "v1.7.30", "2.0.4+azure", "1.7.27-k3s1", "2.0.0-rc.1", "29.7".
// At least major.minor; a missing patch is 0.
func ParseReleaseVersion(s string) ([3]int, error) {
	core := strings.TrimPrefix(strings.TrimSpace(s), "v")
	if i := strings.IndexAny(core, "-+~"); i >= 0 {
		core = core[:i]
	}
	parts := strings.Split(core, ".")
	var v [3]int
	if len(parts) < 2 || len(parts) > 3 {
		return v, fmt.Errorf("%w: version %q is not major.minor[.patch]", ErrUnknownRelease, s)
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n >= 999 {
			return v, fmt.Errorf("%w: version %q is not major.minor[.patch]", ErrUnknownRelease, s)
		}
		v[i] = n
	}
	return v, nil
}

// EngineForRelease returns the profile of an engine release: engine is
// "containerd", "docker" or "docker+containerd-store".
func EngineForRelease(engine, version string) (Engine, ReleaseRange, error) {
	v, err := ParseReleaseVersion(version)
	if err != nil {
		return nil, ReleaseRange{}, fmt.Errorf("%w; supported: %s", err, SupportedReleases())
	}
	for _, r := range Ranges {
		if r.Engine == engine && r.contains(v) {
			e, err := EngineByName(r.Profile)
			return e, r, err
		}
	}
	return nil, ReleaseRange{}, fmt.Errorf("%w: %s %s has no profile; supported: %s", ErrUnknownRelease, engine, version, SupportedReleases())
}

// ParseEngine reads an --engine value: a
// profile name, containerd@VERSION, docker@VERSION or
// docker@VERSION+containerd-store. deprecated is set for an old name that
// still works (containerd-1.7) and says what to write instead.
func ParseEngine(s string) (e Engine, deprecated string, err error) {
	name, version, ok := strings.Cut(strings.TrimSpace(s), "@")
	if !ok {
		if name == Containerd17 {
			return profileContainerdLegacy, fmt.Sprintf("engine %q is deprecated: it is %q (containerd 1.7.19 and later 1.7), or name the release as containerd@1.7.30", Containerd17, ContainerdLegacy), nil
		}
		e, err := EngineByName(name)
		if err != nil {
			return nil, "", fmt.Errorf("%w, or ENGINE@VERSION (%s)", err, SupportedReleases())
		}
		return e, "", nil
	}
	engine := name
	if v, ok := strings.CutSuffix(version, "+containerd-store"); ok && name == "docker" {
		engine, version = "docker+containerd-store", v
	}
	if engine != "containerd" && engine != "docker" && engine != "docker+containerd-store" {
		return nil, "", fmt.Errorf("%w %q: want containerd@VERSION, docker@VERSION or docker@VERSION+containerd-store", ErrUnknownEngine, s)
	}
	if version == "" {
		return nil, "", fmt.Errorf("%w: %q names no version; supported: %s", ErrUnknownRelease, s, SupportedReleases())
	}
	e, _, err = EngineForRelease(engine, version)
	return e, "", err
}

// ErrSameEngine is an engine list that names one profile twice, however
// spelled (containerd and containerd@2.1.6, say).
var ErrSameEngine = errors.New("name each engine profile once")

// ParseEngines reads a list of engines as ParseEngine reads one, for every
// caller (imgctl's --engine, a policy's engines): the profiles in order,
// and the deprecation notes of old names that still work. A list that
// names one profile twice, however spelled, is ErrSameEngine: each engine
// would be simulated, and decide, twice.
func ParseEngines(values []string) (engines []Engine, deprecated []string, err error) {
	seen := map[string]string{} // profile name: the value that named it
	for _, v := range values {
		e, dep, err := ParseEngine(v)
		if err != nil {
			return nil, nil, err
		}
		if dep != "" {
			deprecated = append(deprecated, dep)
		}
		if prev, ok := seen[e.Name()]; ok {
			return nil, nil, fmt.Errorf("%s and %s are the same profile (%s): %w", prev, v, e.Name(), ErrSameEngine)
		}
		seen[e.Name()] = v
		engines = append(engines, e)
	}
	return engines, deprecated, nil
}
