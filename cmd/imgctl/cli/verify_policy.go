package cli

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/imgctl/imgctl/policy"
	"github.com/imgctl/imgctl/sign"
	"github.com/imgctl/imgctl/verify"
)

// gateFlags are the --policy and --key flags verify and promote share.
type gateFlags struct {
	policy, signed string
	keys           []string
	at             string
}

func (g *gateFlags) add(fl *pflag.FlagSet) {
	fl.StringVar(&g.policy, "policy", "", "policy file (YAML, see examples/policy.yaml); the flags add to it")
	fl.StringSliceVar(&g.keys, "key", nil, "cosign public key the reference's digest must be signed with (repeatable; added to the policy's keys)")
	addAtFlag(fl, &g.at, "the policy's patchLevel limits are checked on")
	fl.StringVar(&g.signed, "signed", "reference", "what --key checks: reference (the digest REF names, as cosign verify; an index's signature covers its children) or all (every child too)")
}

// gate loads the policy and the keys and combines them with the verify
// options from the other flags, as policy.NewGate documents.
func (g *gateFlags) gate(vo verify.Options) (*policy.Gate, error) {
	var p *policy.Policy
	if g.policy != "" {
		var err error
		if p, err = policy.Load(g.policy); err != nil {
			return nil, fmt.Errorf("%w: --policy: %w", ErrUsage, err)
		}
	}
	scope, err := sign.ParseScope(g.signed)
	if err != nil {
		return nil, fmt.Errorf("%w: --signed: %w", ErrUsage, err)
	}
	at, err := parseAt(g.at)
	if err != nil {
		return nil, err
	}
	gt, err := policy.NewGate(p, vo, splitList(g.keys), scope)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	if gt.PatchLevel != nil {
		gt.PatchLevel.At = at
	}
	return gt, nil
}
