package verify

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/findings"
	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/snapshot"
)

// PlatformPattern selects the images a supply-chain requirement covers:
// "*" (every image), "os/*" (every architecture and variant of an os),
// "*/arch", or a platform as platform.Parse reads it
// (os/arch[/variant][:os.version]), matched with platform.SameBuild, so
// that linux/arm64 covers linux/arm64/v8 and windows/amd64 every build.
type PlatformPattern struct {
	raw      string
	os, arch string // for the wildcard forms; "*" matches anything
	exact    *platform.Platform
}

// ParsePlatformPattern reads a PlatformPattern.
func ParsePlatformPattern(s string) (PlatformPattern, error) {
	in := strings.TrimSpace(s)
	if !strings.Contains(in, "*") {
		p, err := platform.Parse(in)
		if err != nil {
			return PlatformPattern{}, err
		}
		return PlatformPattern{raw: in, exact: &p}, nil
	}
	if in == "*" {
		return PlatformPattern{raw: in, os: "*", arch: "*"}, nil
	}
	os, arch, ok := strings.Cut(strings.ToLower(in), "/")
	valid := func(c string) bool { return c == "*" || (c != "" && !strings.ContainsAny(c, "*/:")) }
	if !ok || !valid(os) || !valid(arch) {
		return PlatformPattern{}, fmt.Errorf("%w %q: a pattern is *, os/*, */arch or a platform", platform.ErrInvalidPlatform, s)
	}
	return PlatformPattern{raw: in, os: os, arch: arch}, nil
}

// String returns the pattern as written.
func (p PlatformPattern) String() string { return p.raw }

// Match reports whether an image of platform have is covered.
func (p PlatformPattern) Match(have platform.Platform) bool {
	if p.exact != nil {
		return platform.SameBuild(*p.exact, have)
	}
	n := platform.Normalize(have)
	return (p.os == "*" || p.os == n.OS) && (p.arch == "*" || p.arch == n.Architecture)
}

// Builder is a trusted origin of provenance: a provenance matches when
// each field that is set matches its builder id or build type (see
// MatchGlob).
type Builder struct {
	ID, BuildType string
}

// Matches reports whether a provenance statement comes from b.
func (b Builder) Matches(s snapshot.Statement) bool {
	return (b.ID == "" || MatchGlob(b.ID, s.BuilderID)) && (b.BuildType == "" || MatchGlob(b.BuildType, s.BuildType))
}

// MatchGlob matches s against a pattern that is exact but for "*", which
// matches any run of characters, "/" included (a builder id or build type
// is a URI: path.Match's "*" would stop at each "/"). No other character
// is special.
func MatchGlob(pattern, s string) bool {
	if !strings.Contains(pattern, "*") {
		return pattern == s
	}
	parts := strings.Split(pattern, "*")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$").MatchString(s)
}

// AttestationRequirement is what a policy requires of the attestations of
// the images of some platforms.
type AttestationRequirement struct {
	Platforms []PlatformPattern
	// Provenance requires a SLSA provenance (v0.2 or v1) describing the
	// image; with Builders, one from one of them.
	Provenance bool
	Builders   []Builder
	// SBOM requires an SBOM (SPDX or CycloneDX) attached to the image.
	SBOM bool
}

// Covers reports whether the requirement applies to an image of p.
func (r AttestationRequirement) Covers(p *platform.Platform) bool {
	return p != nil && slices.ContainsFunc(r.Platforms, func(pp PlatformPattern) bool { return pp.Match(*p) })
}

// needsAttestations reports whether the requirement reads attestations.
func (r AttestationRequirement) needsAttestations() bool { return r.Provenance || r.SBOM }

// AttestedImages returns the digests of the images of s whose attestations
// reqs look at, so that a caller reads attestations only for them (and not
// at all when none is covered).
func AttestedImages(s *snapshot.Snapshot, reqs []AttestationRequirement) []v1.Hash {
	var out []v1.Hash
	for _, e := range imagesOf(s) {
		if slices.ContainsFunc(reqs, func(r AttestationRequirement) bool { return r.needsAttestations() && r.Covers(e.Platform()) }) &&
			!slices.Contains(out, e.Descriptor.Digest) {
			out = append(out, e.Descriptor.Digest)
		}
	}
	return out
}

// EvaluateAttestations checks the images of s that reqs cover against the
// attestations read of s (snapshot.LoadAttestations): RuleMissingProvenance
// when no SLSA provenance describes an image, RuleUntrustedBuilder when
// provenance does but none from a trusted builder, RuleMissingSBOM when no
// SBOM is attached. An attestation counts for the image its index entry
// points at, and a statement only when it names that image as a subject.
// One finding per rule and image, of error severity. It does no I/O.
func EvaluateAttestations(s *snapshot.Snapshot, atts []snapshot.Attestation, reqs []AttestationRequirement) []findings.Finding {
	c := &checker{s: s, r: &Report{}}
	type key struct{ rule, digest string }
	seen := map[key]bool{}
	for _, e := range imagesOf(s) {
		var stmts []snapshot.Statement
		var elsewhere int
		hint := c.noIndexHint()
		for _, a := range atts {
			if a.Subject != e.Descriptor.Digest {
				continue
			}
			if a.Absent {
				hint += fmt.Sprintf(" (the index lists its attestation manifest %s, which the repository does not have)", a.Descriptor.Digest)
			}
			for _, st := range a.Statements {
				if st.Describes(e.Descriptor.Digest) {
					stmts = append(stmts, st)
				} else if snapshot.IsProvenance(st.PredicateType) {
					elsewhere++
				}
			}
		}
		add := func(rule, format string, args ...any) {
			k := key{rule, e.Descriptor.Digest.String()}
			if !seen[k] {
				seen[k] = true
				c.add(rule, findings.Error, e, format, args...)
			}
		}
		for _, r := range reqs {
			if !r.Covers(e.Platform()) {
				continue
			}
			if r.Provenance {
				c.provenance(stmts, elsewhere, hint, r.Builders, add)
			}
			if r.SBOM && !slices.ContainsFunc(stmts, func(st snapshot.Statement) bool { return snapshot.IsSBOM(st.PredicateType) }) {
				add(RuleMissingSBOM, "no SBOM attestation (SPDX or CycloneDX) is attached to the image%s; build it with imgctl build --sbom", hint)
			}
		}
	}
	return c.r.Findings
}

// provenance reports a missing or untrusted provenance among stmts, the
// statements describing one image; elsewhere counts the provenance
// attached to it that describes another digest; hint ends the message of
// a missing one.
func (c *checker) provenance(stmts []snapshot.Statement, elsewhere int, hint string, builders []Builder, add func(rule, format string, args ...any)) {
	var provs []snapshot.Statement
	for _, st := range stmts {
		if snapshot.IsProvenance(st.PredicateType) {
			provs = append(provs, st)
		}
	}
	if len(provs) == 0 {
		msg := "no SLSA provenance attestation describes the image" + hint
		if elsewhere > 0 {
			msg += fmt.Sprintf(" (%d attached to it describe another digest: the image changed after they were written)", elsewhere)
		}
		add(RuleMissingProvenance, "%s; build it with imgctl build --provenance mode=min (the default), or rebase it with imgctl rebase", msg)
		return
	}
	if len(builders) == 0 {
		return
	}
	var got []string
	for _, st := range provs {
		if slices.ContainsFunc(builders, func(b Builder) bool { return b.Matches(st) }) {
			return
		}
		got = append(got, fmt.Sprintf("builder id %q, build type %q", st.BuilderID, st.BuildType))
	}
	add(RuleUntrustedBuilder, "no provenance comes from a trusted builder: the image has %s", strings.Join(got, "; "))
}

func (c *checker) noIndexHint() string {
	if c.s.Index == nil {
		return " (a single manifest, not an index, carries no attestation manifests)"
	}
	return ""
}

// imagesOf returns the runnable entries of s: not attestations, not nested
// indexes.
func imagesOf(s *snapshot.Snapshot) []*snapshot.Entry {
	return (&checker{s: s}).images()
}
