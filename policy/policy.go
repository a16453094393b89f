// Package policy is the promotion gate: a YAML policy shared by CI,
// `imgctl verify --policy` and `imgctl promote`, the checks it adds to
// verify's (allowed base images, required signing keys, per-platform
// supply-chain requirements, the Windows patch level) and the severity
// overrides it applies to every finding. Package promote copies an index
// that passes to its release tag.
//
// Load reads a policy file (examples/policy.yaml is one); unknown fields,
// rule names, targets, platforms and base patterns are errors. NewGate
// combines it with the command line's settings, and Gate.Check runs it.
// supplyChain and patchLevel cost requests only when they are set.
//
// docs/policy.md holds the file's sections, what each requires, and how
// command-line flags combine with them.
package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/imgctl/imgctl/platform"
)

// Policy is a policy file.
type Policy struct {
	// Version of the format; 0 (absent) or 1.
	Version int `yaml:"version"`
	// Targets are the Windows LTSC releases (or builds) nodes run.
	Targets []string `yaml:"targets"`
	// RequirePlatforms must each be in the index, os/arch[/variant][:os.version].
	RequirePlatforms []string `yaml:"requirePlatforms"`
	// HostProcess accepts Windows variants without os.version.
	HostProcess bool `yaml:"hostProcess"`
	// RunAsNonRoot makes a ContainerAdministrator user an error.
	RunAsNonRoot bool `yaml:"runAsNonRoot"`
	// AllowedBases are the repositories images may be built on; see Bases.
	AllowedBases []string `yaml:"allowedBases"`
	// Keys are paths of cosign public keys; every key must verify the
	// manifest the reference names (and with Signed "all" each child).
	Keys []string `yaml:"keys"`
	// Signed is the signing scope of Keys and SupplyChain's keys:
	// "reference" (the default: the digest the reference names, as cosign
	// verify checks it) or "all" (every child too); see sign.Scope.
	Signed string `yaml:"signed"`
	// SupplyChain are per-platform requirements of signatures and
	// attestations.
	SupplyChain []SupplyChain `yaml:"supplyChain"`
	// Engines are the engines the fleet runs (see Engines above); nil when
	// the key is absent.
	Engines []string `yaml:"engines"`
	// PatchLevel limits how far Windows variants' bases may lag and the
	// lifecycle phases they may be in; nil when the key is absent, and
	// then the patch level is not checked.
	PatchLevel *PatchLevel `yaml:"patchLevel"`
	// Rules override severities.
	Rules Rules `yaml:"rules"`

	// Dir is the directory relative key paths are read from: the policy
	// file's directory for Load.
	Dir string `yaml:"-"`
}

// Sentinel errors, checked with errors.Is.
var (
	// ErrInvalidPolicy wraps every problem with a policy file.
	ErrInvalidPolicy = errors.New("invalid policy")
	// ErrUnknownRule is returned for a rule name no check reports.
	ErrUnknownRule = errors.New("unknown rule")
	// ErrSignedAllWithoutKey: the signatures of every child are required
	// (signed: all), and there is no key to check them with.
	ErrSignedAllWithoutKey = errors.New("signatures required on every child (signed: all) without a key to check them")
)

// Load reads and validates a policy file.
func Load(path string) (*Policy, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading policy: %w", err)
	}
	p, err := Parse(b, filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// Parse reads and validates a policy document; relative key paths will be
// read from dir.
func Parse(b []byte, dir string) (*Policy, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	p := &Policy{}
	if err := dec.Decode(p); errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: empty document", ErrInvalidPolicy)
	} else if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidPolicy, err)
	}
	if err := dec.Decode(&struct{}{}); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: want one YAML document", ErrInvalidPolicy)
	}
	p.Dir = dir
	if err := p.validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidPolicy, err)
	}
	return p, nil
}

func (p *Policy) validate() error {
	var errs []error
	if p.Version != 0 && p.Version != 1 {
		errs = append(errs, fmt.Errorf("version %d: this imgctl reads version 1", p.Version))
	}
	if _, err := platform.ParseTargets(p.Targets); err != nil {
		errs = append(errs, fmt.Errorf("targets: %w", err))
	}
	if _, err := platform.ParseList(p.RequirePlatforms); err != nil {
		errs = append(errs, fmt.Errorf("requirePlatforms: %w", err))
	}
	if _, err := ParseBases(p.AllowedBases); err != nil {
		errs = append(errs, fmt.Errorf("allowedBases: %w", err))
	}
	if _, err := ParseEngines(p.Engines); err != nil {
		errs = append(errs, fmt.Errorf("engines: %w", err))
	}
	for _, k := range p.Keys {
		if k == "" {
			errs = append(errs, errors.New("keys: empty path"))
		}
	}
	for i, sc := range p.SupplyChain {
		if err := sc.validate(); err != nil {
			errs = append(errs, fmt.Errorf("supplyChain[%d]: %w", i, err))
		}
	}
	if p.PatchLevel != nil {
		if err := p.PatchLevel.validate(); err != nil {
			errs = append(errs, fmt.Errorf("patchLevel: %w", err))
		}
	}
	if err := p.Rules.validate(p.hasKeys()); err != nil {
		errs = append(errs, fmt.Errorf("rules: %w", err))
	}
	return errors.Join(errs...)
}

// hasKeys reports whether the policy requires a signature anywhere.
func (p *Policy) hasKeys() bool {
	return len(p.Keys) > 0 || slices.ContainsFunc(p.SupplyChain, func(sc SupplyChain) bool { return len(sc.Keys) > 0 })
}

// KeyPaths returns the key paths, relative ones joined to Dir.
func (p *Policy) KeyPaths() []string { return p.paths(p.Keys) }

// paths joins relative key paths to Dir.
func (p *Policy) paths(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		if !filepath.IsAbs(k) && p.Dir != "" {
			k = filepath.Join(p.Dir, k)
		}
		out[i] = k
	}
	return out
}

// ParseEngines reads a policy's engines: each a release or profile as
// --engine takes it, through the parser --engine uses
// (platform.ParseEngines). nil (the key absent) gives nil; an empty list,
// an unreadable entry and two entries of one profile are errors. A
// deprecated name works, as on the command line.
func ParseEngines(names []string) ([]platform.Engine, error) {
	if names == nil {
		return nil, nil
	}
	if len(names) == 0 {
		return nil, errors.New("the list is empty: name the engines the fleet runs (containerd@2.0.4, docker@29.7), or leave the key out")
	}
	out, _, err := platform.ParseEngines(names)
	return out, err
}
