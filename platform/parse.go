package platform

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/containerd/platforms"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	specs "github.com/opencontainers/image-spec/specs-go/v1"
)

// Platform is go-containerregistry's platform, the type every imgctl package
// passes around.
type Platform = v1.Platform

// ErrInvalidPlatform is returned for a platform string imgctl cannot read.
var ErrInvalidPlatform = errors.New("invalid platform")

var componentRe = regexp.MustCompile(`^[a-z0-9_.-]+$`)

// Parse reads a platform in imgctl's form os/arch[/variant][:os.version] or
// in containerd's form windows(10.0.20348)/amd64. Unlike containerd's Parse,
// it never fills in the architecture of the machine it runs on: both os and
// architecture are required, because a CI runner is not the target node.
func Parse(s string) (Platform, error) {
	in := strings.TrimSpace(s)
	if strings.Contains(in, "(") {
		return parseContainerd(s, in)
	}
	spec, osv, _ := strings.Cut(in, ":")
	parts := strings.Split(strings.ToLower(spec), "/")
	if len(parts) < 2 || len(parts) > 3 {
		return Platform{}, fmt.Errorf("%w %q: want os/arch[/variant][:os.version]", ErrInvalidPlatform, s)
	}
	for _, p := range parts {
		if !componentRe.MatchString(p) {
			return Platform{}, fmt.Errorf("%w %q: component %q must match %s", ErrInvalidPlatform, s, p, componentRe)
		}
	}
	p := Platform{OS: parts[0], Architecture: parts[1]}
	if len(parts) == 3 {
		p.Variant = parts[2]
	}
	if osv != "" {
		if p.OS != "windows" {
			return Platform{}, fmt.Errorf("%w %q: os.version is only meaningful for windows", ErrInvalidPlatform, s)
		}
		if _, err := ParseHostVersion(osv); err != nil {
			return Platform{}, fmt.Errorf("%w %q: %w", ErrInvalidPlatform, s, err)
		}
		p.OSVersion = osv
	}
	return p, nil
}

// parseContainerd delegates the windows(10.0.20348+feature)/amd64 form to
// containerd's parser, which owns that syntax.
func parseContainerd(orig, in string) (Platform, error) {
	if strings.Count(in, "/") < 1 {
		return Platform{}, fmt.Errorf("%w %q: the architecture is required", ErrInvalidPlatform, orig)
	}
	sp, err := platforms.Parse(in)
	if err != nil {
		return Platform{}, fmt.Errorf("%w %q: %w", ErrInvalidPlatform, orig, err)
	}
	p := FromSpec(sp)
	if p.OSVersion != "" {
		if p.OS != "windows" {
			return Platform{}, fmt.Errorf("%w %q: os.version is only meaningful for windows", ErrInvalidPlatform, orig)
		}
		if _, err := ParseHostVersion(p.OSVersion); err != nil {
			return Platform{}, fmt.Errorf("%w %q: %w", ErrInvalidPlatform, orig, err)
		}
	}
	return p, nil
}

// ParseList parses a comma-separated list or repeated flag values.
func ParseList(list []string) ([]Platform, error) {
	var out []Platform
	var errs []error
	for _, item := range list {
		for s := range strings.SplitSeq(item, ",") {
			if strings.TrimSpace(s) == "" {
				continue
			}
			p, err := Parse(s)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			out = append(out, p)
		}
	}
	return out, errors.Join(errs...)
}

// Format writes os/arch[/variant][:os.version], the inverse of Parse.
func Format(p Platform) string {
	s := p.OS + "/" + p.Architecture
	if p.OS == "" {
		s = "unknown"
	}
	if p.Variant != "" {
		s += "/" + p.Variant
	}
	if p.OSVersion != "" {
		s += ":" + p.OSVersion
	}
	return s
}

// FormatPtr formats a possibly absent platform; nil prints as "-".
func FormatPtr(p *Platform) string {
	if p == nil {
		return "-"
	}
	return Format(*p)
}

// ToSpec converts to the OCI image-spec platform used by containerd.
func ToSpec(p Platform) specs.Platform {
	return specs.Platform{
		OS: p.OS, Architecture: p.Architecture, Variant: p.Variant,
		OSVersion: p.OSVersion, OSFeatures: slices.Clone(p.OSFeatures),
	}
}

// FromSpec converts from the OCI image-spec platform.
func FromSpec(p specs.Platform) Platform {
	return Platform{
		OS: p.OS, Architecture: p.Architecture, Variant: p.Variant,
		OSVersion: p.OSVersion, OSFeatures: slices.Clone(p.OSFeatures),
	}
}

// Normalize returns the canonical os/arch/variant (x86_64 becomes amd64,
// arm64/v8 becomes arm64) as containerd computes it, keeping os.version.
func Normalize(p Platform) Platform {
	n := FromSpec(platforms.Normalize(ToSpec(p)))
	n.Features = p.Features
	return n
}
