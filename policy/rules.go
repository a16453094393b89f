package policy

import (
	"errors"
	"fmt"
	"slices"

	"github.com/imgctl/imgctl/findings"
	"github.com/imgctl/imgctl/sign"
	"github.com/imgctl/imgctl/verify"
)

// Rule names of the findings this package reports.
const (
	// RuleBaseNotAllowed: an image names a base outside AllowedBases.
	RuleBaseNotAllowed = "base-not-allowed"
	// RuleMissingBaseAnnotation: an image does not say what it is built on.
	RuleMissingBaseAnnotation = "missing-base-annotation"
)

// KnownRules lists every rule a policy may name: verify's, sign's and this
// package's.
func KnownRules() []string {
	out := slices.Clone(verify.Rules)
	out = append(out, sign.Rules...)
	return append(out, RuleBaseNotAllowed, RuleMissingBaseAnnotation, RuleBaseBehind, RuleBaseOutOfSupport, RuleBaseExtendedSupport)
}

// Rules override the severity of findings by rule name.
type Rules struct {
	// Errors are rules whose findings are errors, even those reported as
	// warnings.
	Errors []string `yaml:"errors"`
	// Ignore are rules whose findings are dropped.
	Ignore []string `yaml:"ignore"`
}

func (r Rules) validate(hasKeys bool) error {
	known := KnownRules()
	var errs []error
	for _, n := range append(slices.Clone(r.Errors), r.Ignore...) {
		if !slices.Contains(known, n) {
			errs = append(errs, fmt.Errorf("%w %q", ErrUnknownRule, n))
		}
	}
	for _, n := range r.Ignore {
		if slices.Contains(r.Errors, n) {
			errs = append(errs, fmt.Errorf("%q is both in errors and in ignore", n))
		}
		if hasKeys && slices.Contains(sign.Rules, n) {
			errs = append(errs, fmt.Errorf("the policy requires signing keys but ignores %q", n))
		}
	}
	return errors.Join(errs...)
}

// Apply drops the ignored findings of rep, makes the listed ones errors,
// and sets rep.Passed from what remains.
func (r Rules) Apply(rep *verify.Report) {
	out := rep.Findings[:0]
	for _, f := range rep.Findings {
		if slices.Contains(r.Ignore, f.Rule) {
			continue
		}
		if slices.Contains(r.Errors, f.Rule) {
			f.Severity = findings.Error
		}
		out = append(out, f)
	}
	rep.Findings = out
	rep.Passed = len(rep.Errors()) == 0
}
