package policy

import (
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/imgctl/imgctl/findings"
	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/snapshot"
)

// Bases are allowed base repositories. A pattern is a repository
// (docker.io/library/alpine; short Docker Hub names are normalised), a
// repository prefix ending in /* (mcr.microsoft.com/windows/* allows
// mcr.microsoft.com/windows/nanoserver and .../servercore), or a registry
// followed by /* (mcr.microsoft.com/*).
type Bases []basePattern

type basePattern struct {
	pattern string
	repo    string // the repository, or the prefix before "/*"
	prefix  bool
}

// ParseBases parses allowed-base patterns.
func ParseBases(patterns []string) (Bases, error) {
	out := make(Bases, 0, len(patterns))
	for _, p := range patterns {
		bp := basePattern{pattern: p}
		s, prefix := strings.CutSuffix(p, "/*")
		bp.prefix = prefix
		if prefix && !strings.Contains(s, "/") {
			reg, err := name.NewRegistry(s)
			if err != nil {
				return nil, fmt.Errorf("pattern %q: %w", p, err)
			}
			bp.repo = reg.Name()
		} else {
			repo, err := name.NewRepository(s)
			if err != nil {
				return nil, fmt.Errorf("pattern %q: %w", p, err)
			}
			bp.repo = repo.Name()
		}
		out = append(out, bp)
	}
	return out, nil
}

// allows reports whether an image reference's repository is allowed.
func (b Bases) allows(ref name.Reference) bool {
	repo := ref.Context().Name()
	for _, p := range b {
		if repo == p.repo && !p.prefix || p.prefix && strings.HasPrefix(repo, p.repo+"/") {
			return true
		}
	}
	return false
}

// Check reports, for every image of the snapshot (attestations and nested
// indexes aside), a base-not-allowed error for each base annotation (on
// the manifest or on its index descriptor) outside b, and a
// missing-base-annotation warning when it has none. No patterns, no
// findings.
func (b Bases) Check(s *snapshot.Snapshot) []findings.Finding {
	if len(b) == 0 {
		return nil
	}
	var out []findings.Finding
	for _, e := range s.Entries {
		if e.Manifest == nil || e.IsAttestation() {
			continue
		}
		f := findings.Finding{Digest: e.Descriptor.Digest.String()}
		p := e.Descriptor.Platform
		if p == nil {
			p = e.ConfigPlatform()
		}
		f.Platform = platform.FormatPtr(p)
		names := baseNames(e)
		if len(names) == 0 {
			f.Rule, f.Severity = RuleMissingBaseAnnotation, findings.Warning
			f.Message = fmt.Sprintf("no %s annotation: cannot check the base against the policy's allowed bases", snapshot.AnnotationBaseName)
			out = append(out, f)
		}
		for _, n := range names {
			ref, err := name.ParseReference(n)
			if err == nil && b.allows(ref) {
				continue
			}
			f.Rule, f.Severity = RuleBaseNotAllowed, findings.Error
			f.Message = fmt.Sprintf("built on %s, which the policy's allowed bases (%s) do not include", n, b)
			out = append(out, f)
		}
	}
	return out
}

// baseNames returns the distinct base annotations of an entry.
func baseNames(e snapshot.Entry) []string {
	var out []string
	for _, a := range []map[string]string{e.Descriptor.Annotations, e.Manifest.Annotations} {
		if n := a[snapshot.AnnotationBaseName]; n != "" && (len(out) == 0 || out[0] != n) {
			out = append(out, n)
		}
	}
	return out
}

// String lists the patterns.
func (b Bases) String() string {
	ps := make([]string, len(b))
	for i, p := range b {
		ps[i] = p.pattern
	}
	return strings.Join(ps, ", ")
}
