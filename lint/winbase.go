package lint

import (
	"fmt"
	"strings"

	"github.com/distribution/reference"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/findings"
	"github.com/imgctl/imgctl/platform"
)

// WindowsBaseArg is the build arg that carries each Windows variant's base:
// imgctl build sets it per --windows release, so a Dockerfile built for
// several releases must name every Windows stage's base through it:
//
//	ARG WINDOWS_BASE=mcr.microsoft.com/windows/nanoserver:ltsc2022
//	FROM ${WINDOWS_BASE} AS final-windows
const WindowsBaseArg = "WINDOWS_BASE"

// BaseResolver returns the platforms a base image offers, as its registry
// says: a single image's platform from its config, os.version included, or
// the platform of every child descriptor of an index. ref is the base as
// the FROM line names it, after ARG expansion. Preflight calls it only for
// Windows bases whose reference names no release.
type BaseResolver func(ref string) ([]v1.Platform, error)

// windowsBaseFindings checks, when building the Windows platform p, the
// base of every Windows stage the target needs and that is built FROM an
// image: it must come from WindowsBaseArg when several releases are built,
// and must be of the release's build, as its tag or (with opts.Resolve)
// its registry tells.
func windowsBaseFindings(g *stageGraph, file string, p v1.Platform, opts Options) ([]findings.Finding, error) {
	if p.OS != "windows" {
		return nil, nil
	}
	var out []findings.Finding
	for _, s := range g.reachable() {
		if s.platform.OS != "windows" || s.base != nil || strings.EqualFold(s.baseName, "scratch") {
			continue
		}
		f := findings.Finding{Rule: RuleWindowsBaseRelease, Severity: findings.Error, File: file, Line: startLine(s.st.Location), Stage: s.name}
		if opts.WindowsReleases > 1 && !s.baseArgs[WindowsBaseArg] {
			// The same for every variant: no platform, so that it is reported once.
			f.Message = fmt.Sprintf("stage %q is built FROM %s, which does not use ${%s}: all %d Windows releases "+
				"would be built on that one base, and all but one fail after the solve; write FROM ${%s}, "+
				"which imgctl sets per release", s.name, s.st.BaseName, WindowsBaseArg, opts.WindowsReleases, WindowsBaseArg)
			out = append(out, f)
		}
		want, ok := platform.Build(s.platform.OSVersion)
		if !ok {
			continue // no release being built: plain windows/amd64
		}
		msg, err := baseReleaseProblem(s, want, opts.Resolve)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", file, f.Line, err)
		}
		if msg != "" {
			f.Platform, f.Message = p.String(), msg
			out = append(out, f)
		}
	}
	return out, nil
}

// baseReleaseProblem says why stage s's base cannot give Windows build
// want, or "" when it can or nothing tells.
func baseReleaseProblem(s *stage, want uint32, resolve BaseResolver) (string, error) {
	building := fmt.Sprintf("the variant being built is Windows build %s", platform.BuildName(want))
	if b, ok := platform.TagBuild(imageTag(s.baseName)); ok {
		if b == want {
			return "", nil
		}
		return fmt.Sprintf("stage %q is built FROM %s, whose tag names Windows build %s, but %s: "+
			"the build fails after the solve; name the base through ${%s} or give the release's tag",
			s.name, s.baseName, platform.BuildName(b), building, WindowsBaseArg), nil
	}
	if resolve == nil {
		return "", nil
	}
	plats, err := resolve(s.baseName)
	if err != nil {
		return "", fmt.Errorf("resolving base %s: %w", s.baseName, err)
	}
	sp := platform.FromSpec(s.platform)
	var have []string
	for _, hp := range plats {
		if !platform.SameOSArch(sp, hp) {
			continue
		}
		if b, ok := platform.Build(hp.OSVersion); ok && b == want {
			return "", nil
		}
		v := hp.OSVersion
		if v == "" {
			v = "no os.version"
		}
		have = append(have, v)
	}
	offers := fmt.Sprintf("which has no %s/%s variant", sp.OS, sp.Architecture)
	if len(have) > 0 {
		offers = fmt.Sprintf("whose %s/%s os.version is %s", sp.OS, sp.Architecture, strings.Join(have, ", "))
	}
	return fmt.Sprintf("stage %q is built FROM %s, %s, but %s: the build fails; use a base of that release",
		s.name, s.baseName, offers, building), nil
}

// imageTag returns the tag of an image reference, or "" when it has none
// (a digest alone, or no tag at all) or cannot be parsed.
func imageTag(ref string) string {
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return ""
	}
	if t, ok := named.(reference.Tagged); ok {
		return t.Tag()
	}
	return ""
}
