package policy

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/imgctl/imgctl/findings"
	"github.com/imgctl/imgctl/patchlevel"
	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/snapshot"
)

// Rule names of the patch-level findings.
const (
	// RuleBaseBehind: a Windows variant's base revision is behind its
	// build's newest, or its patch level cannot be told.
	RuleBaseBehind = "base-behind"
	// RuleBaseOutOfSupport: the variant's Windows release has left
	// extended support.
	RuleBaseOutOfSupport = "base-out-of-support"
	// RuleBaseExtendedSupport: the variant's Windows release is in
	// extended support (security updates only).
	RuleBaseExtendedSupport = "base-extended-support"
)

// PatchLevel is the policy's patchLevel section: the limits on how far a
// Windows variant's base may lag and the lifecycle phases it may be in.
// With the section present, the gate reports each Windows variant's patch
// level (see PatchLevelRule.Evaluate).
type PatchLevel struct {
	// MaxPatchTuesdaysBehind is the most Patch Tuesdays a variant may be
	// behind; nil for no limit.
	MaxPatchTuesdaysBehind *int `yaml:"maxPatchTuesdaysBehind"`
	// MaxFixAgeDays is the most days a fix may have been available; nil
	// for no limit.
	MaxFixAgeDays *int `yaml:"maxFixAgeDays"`
	// AllowedPhases are the lifecycle phases (mainstream, extended, ended)
	// a release may be in; empty means mainstream and extended.
	AllowedPhases []string `yaml:"allowedPhases"`
}

func (p *PatchLevel) validate() error {
	var errs []error
	if n := p.MaxPatchTuesdaysBehind; n != nil && *n < 0 {
		errs = append(errs, fmt.Errorf("maxPatchTuesdaysBehind %d: want 0 or more", *n))
	}
	if n := p.MaxFixAgeDays; n != nil && *n < 0 {
		errs = append(errs, fmt.Errorf("maxFixAgeDays %d: want 0 or more", *n))
	}
	for _, ph := range p.AllowedPhases {
		if !slices.Contains(platform.Phases, ph) {
			errs = append(errs, fmt.Errorf("allowedPhases: %q: want one of %v", ph, platform.Phases))
		}
	}
	return errors.Join(errs...)
}

// PatchLevelRule is the patch-level check of a gate: the policy's limits
// and the report's date.
type PatchLevelRule struct {
	PatchLevel
	// At is the date the report is made on; zero means today.
	At platform.Date
	// Cache, when set, is shared with the run's other patch-level reports
	// (imgctl patch's images), so that each base repository's tags and
	// each revision are read once per run; nil reads afresh per check.
	Cache *patchlevel.Cache
}

// limited reports whether the rule sets a limit on the lag.
func (r PatchLevelRule) limited() bool {
	return r.MaxPatchTuesdaysBehind != nil || r.MaxFixAgeDays != nil
}

// allows reports whether the rule allows lifecycle phase ph.
func (r PatchLevelRule) allows(ph string) bool {
	if len(r.AllowedPhases) == 0 {
		return ph != platform.PhaseEnded
	}
	return slices.Contains(r.AllowedPhases, ph)
}

// PatchLevelFindings reports the patch level of the Windows variants of
// s (read through rc, see patchlevel.Check) and what the rule finds in it.
// It is the one patch-level gate of verify, promote and the fleet.
func (r PatchLevelRule) PatchLevelFindings(ctx context.Context, rc *registry.Client, s *snapshot.Snapshot) (*patchlevel.Report, []findings.Finding, error) {
	rc = registry.Or(rc)
	rep, err := patchlevel.Check(ctx, patchlevel.SubjectsOf(s, rc.NameOptions()...), patchlevel.Options{Registry: rc, At: r.At, Cache: r.Cache})
	if err != nil {
		return nil, nil, err
	}
	return rep, r.Evaluate(rep), nil
}

// Evaluate turns a patch-level report into findings, one rule at a time
// for each variant:
//   - base-behind: a warning when the variant is behind its build's
//     newest revision, an error when it is more Patch Tuesdays behind than
//     MaxPatchTuesdaysBehind or its fix older than MaxFixAgeDays; a
//     patch level that cannot be told is a warning, an error under a
//     limit (it cannot be shown to keep it);
//   - base-out-of-support: an error once the release's extended support
//     has ended (a warning when AllowedPhases lists ended); for a build
//     with no lifecycle row, a warning that support cannot be shown (an
//     error when AllowedPhases is set);
//   - base-extended-support: a warning in extended support (an error when
//     AllowedPhases does not list extended).
func (r PatchLevelRule) Evaluate(rep *patchlevel.Report) []findings.Finding {
	var out []findings.Finding
	for _, v := range rep.Variants {
		if f, ok := r.behind(v, rep.At); ok {
			out = append(out, f)
		}
		if f, ok := r.lifecycle(v); ok {
			out = append(out, f)
		}
	}
	return out
}

// behind is the base-behind finding of v, if any.
func (r PatchLevelRule) behind(v patchlevel.Variant, at platform.Date) (findings.Finding, bool) {
	f := findings.Finding{Rule: RuleBaseBehind, Severity: findings.Warning, Digest: v.Digest, Platform: v.Platform}
	switch v.Status {
	case patchlevel.StatusUnknown:
		f.Message = "the patch level of the Windows base cannot be told: " + v.Reason
		if r.limited() {
			f.Severity = findings.Error
			f.Message += "; the policy's patchLevel limits cannot be checked"
		}
		return f, true
	case patchlevel.StatusCurrent:
		return f, false
	}
	pts, days := *v.PatchTuesdaysBehind, *v.FixAvailableDays
	f.Message = fmt.Sprintf("built on %s (published %s), %d revision(s) and %d Patch Tuesday(s) behind %s; a fix has been available for %d day(s) on %s: rebase the variant",
		fmt.Sprintf("10.0.%d.%d", v.Build, v.Revision), platform.DateOf(*v.Published), *v.RevisionsBehind, pts, v.Newest.Version, days, at)
	if n := r.MaxPatchTuesdaysBehind; n != nil && pts > *n {
		f.Severity = findings.Error
		f.Message += fmt.Sprintf(" (the policy allows %d Patch Tuesday(s))", *n)
	}
	if n := r.MaxFixAgeDays; n != nil && days > *n {
		f.Severity = findings.Error
		f.Message += fmt.Sprintf(" (the policy allows a fix to wait %d day(s))", *n)
	}
	return f, true
}

// lifecycle is the lifecycle finding of v, if any.
func (r PatchLevelRule) lifecycle(v patchlevel.Variant) (findings.Finding, bool) {
	l := v.Lifecycle
	f := findings.Finding{Digest: v.Digest, Platform: v.Platform, Severity: findings.Warning}
	if l == nil {
		if v.LifecycleReason == "" {
			return findings.Finding{}, false
		}
		// No lifecycle row: support cannot be shown, so it is not assumed.
		// It passes only where the policy lets an ended release pass: the
		// default phases, written or not, refuse it alike.
		f.Rule = RuleBaseOutOfSupport
		f.Message = fmt.Sprintf("%s (build %d): support cannot be shown: %s", v.Release, v.Build, v.LifecycleReason)
		if !r.allows(platform.PhaseEnded) {
			f.Severity = findings.Error
			f.Message += "; the policy's allowedPhases leave out ended, so an unsupported release cannot pass"
		}
		return f, true
	}
	if l.Phase == platform.PhaseMainstream {
		return findings.Finding{}, false
	}
	if l.Phase == platform.PhaseEnded {
		f.Rule = RuleBaseOutOfSupport
		f.Message = fmt.Sprintf("%s (build %d) left extended support on %s: it gets no security updates; move the variant to a supported release", v.Release, v.Build, l.Until)
	} else {
		f.Rule = RuleBaseExtendedSupport
		f.Message = fmt.Sprintf("%s (build %d) is in extended support until %s (mainstream support ended %s): security updates only", v.Release, v.Build, l.Until, l.MainstreamEnd)
	}
	if !r.allows(l.Phase) {
		f.Severity = findings.Error
	}
	return f, true
}
