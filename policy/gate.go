package policy

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/findings"
	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/sign"
	"github.com/imgctl/imgctl/snapshot"
	"github.com/imgctl/imgctl/verify"
)

// Gate is what a check applies: verify's options, the allowed bases, the
// keys and the severity overrides. Build one with NewGate.
type Gate struct {
	Verify verify.Options
	Bases  Bases
	Keys   []sign.Key
	// Signed is the signing scope of the keys (sign.ScopeReference by
	// default); the flag's and the policy's are or-ed.
	Signed sign.Scope
	// SupplyChain are the policy's per-platform requirements.
	SupplyChain []Requirement
	Rules       Rules
	// Registry is the run's registry client for signature reads; nil means
	// registry.New().
	Registry *registry.Client
	// Concurrency bounds concurrent signature checks; 0 means
	// snapshot.DefaultConcurrency.
	Concurrency int
	// Layers reads the Windows images' own layers (not their base's) and
	// checks their tar entries (verify --layers, see verify.EvaluateLayers).
	Layers bool
	// PatchLevel is the patch-level check, nil when the policy has no
	// patchLevel section. Set its At for a report on another date.
	PatchLevel *PatchLevelRule

	cache *attestationCache // attestations read, see reader
}

// NewGate combines a policy (nil for none) with command-line settings, as
// the package documentation says: flags' targets and required platforms
// are added to the policy's, its booleans are or-ed with the policy's, its
// engines are used as given, keyFiles are loaded and added to the
// policy's keys, and signed widens the policy's signing scope.
func NewGate(p *Policy, flags verify.Options, keyFiles []string, signed sign.Scope) (*Gate, error) {
	if p == nil {
		p = &Policy{}
	}
	g := &Gate{Verify: flags, Rules: p.Rules}
	if p.PatchLevel != nil {
		g.PatchLevel = &PatchLevelRule{PatchLevel: *p.PatchLevel}
	}
	ts, err := platform.ParseTargets(p.Targets)
	if err != nil {
		return nil, fmt.Errorf("%w: targets: %w", ErrInvalidPolicy, err)
	}
	ps, err := platform.ParseList(p.RequirePlatforms)
	if err != nil {
		return nil, fmt.Errorf("%w: requirePlatforms: %w", ErrInvalidPolicy, err)
	}
	if g.Bases, err = ParseBases(p.AllowedBases); err != nil {
		return nil, fmt.Errorf("%w: allowedBases: %w", ErrInvalidPolicy, err)
	}
	g.Verify.Targets = union(ts, flags.Targets, func(t platform.Target) string { return t.Version.String() })
	g.Verify.RequirePlatforms = union(ps, flags.RequirePlatforms, platform.Format)
	if err := g.engines(p.Engines); err != nil {
		return nil, err
	}
	g.Verify.HostProcess = flags.HostProcess || p.HostProcess
	g.Verify.RunAsNonRoot = flags.RunAsNonRoot || p.RunAsNonRoot
	scope, err := sign.ParseScope(p.Signed)
	if err != nil {
		return nil, fmt.Errorf("%w: signed: %w", ErrInvalidPolicy, err)
	}
	g.Signed = scope.Or(signed)
	for _, path := range append(p.KeyPaths(), keyFiles...) {
		k, err := sign.LoadPublicKeyFile(path)
		if err != nil {
			return nil, err
		}
		g.Keys = append(g.Keys, k)
	}
	for _, sc := range p.SupplyChain {
		r, err := sc.requirement(p)
		if err != nil {
			return nil, err
		}
		g.SupplyChain = append(g.SupplyChain, r)
	}
	if g.Signed == sign.ScopeAll && !g.hasKeys() {
		return nil, fmt.Errorf("%w: %w", ErrInvalidPolicy, ErrSignedAllWithoutKey)
	}
	if err := g.Rules.validate(len(g.Keys) > 0 || p.hasKeys()); err != nil {
		return nil, fmt.Errorf("%w: rules: %w", ErrInvalidPolicy, err)
	}
	return g, nil
}

// engines makes the policy's engines decide. They join the engines
// simulated: --engine's as given, or by default every release line.
func (g *Gate) engines(names []string) error {
	es, err := ParseEngines(names)
	if err != nil {
		return fmt.Errorf("%w: engines: %w", ErrInvalidPolicy, err)
	}
	if es == nil {
		return nil
	}
	sim := g.Verify.Engines
	if len(sim) == 0 {
		sim = platform.Engines()
	}
	for _, e := range es {
		g.Verify.Deciding = append(g.Verify.Deciding, e.Name())
		if !slices.ContainsFunc(sim, func(s platform.Engine) bool { return s.Name() == e.Name() }) {
			sim = append(sim, e)
		}
	}
	g.Verify.Engines = sim
	return nil
}

// union returns a followed by the elements of b not in it, by key.
func union[T any](a, b []T, key func(T) string) []T {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.ContainsFunc(out, func(y T) bool { return key(y) == key(x) }) {
			out = append(out, x)
		}
	}
	return out
}

// Check evaluates a snapshot of the manifest at s.Digest in repo: verify's
// rules, the allowed bases, the signatures and attestations the gate
// requires (see chain), with PatchLevel the Windows variants' patch level
// (see PatchLevelRule.PatchLevelFindings), with Layers the Windows images'
// own layers (see readLayers), then the severity overrides. Signatures or
// attestations that cannot be read are an error, not a finding (see
// sign.Verify): there is then no report.
func (g *Gate) Check(ctx context.Context, ref string, repo name.Repository, s *snapshot.Snapshot) (*verify.Report, error) {
	rep := verify.Evaluate(ref, s, g.Verify)
	rep.Findings = append(rep.Findings, g.Bases.Check(s)...)
	fs, checked, err := g.chainChecked(ctx, repo, s)
	if err != nil {
		return nil, err
	}
	if g.hasKeys() {
		rep.Signatures = &verify.SignatureCheck{Scope: string(g.Signed.Or(sign.ScopeReference)), Digests: append([]string{}, checked...)}
	}
	rep.Findings = append(rep.Findings, fs...)
	if g.PatchLevel != nil {
		_, pf, err := g.PatchLevel.PatchLevelFindings(ctx, g.Registry, s)
		if err != nil {
			return nil, err
		}
		rep.Findings = append(rep.Findings, pf...)
	}
	if g.Layers {
		l, err := g.readLayers(ctx, repo, s)
		if err != nil {
			return nil, err
		}
		verify.EvaluateLayers(rep, s, l)
	}
	g.Rules.Apply(rep)
	return rep, nil
}

// CheckChain checks what the gate requires of s's supply chain in repo:
// the signatures by the gate's keys (read by digest) of the manifest, and
// with ScopeAll of its children, then the per-platform requirements of
// SupplyChain. Package promote runs it again at the destination.
func (g *Gate) CheckChain(ctx context.Context, repo name.Repository, s *snapshot.Snapshot) ([]findings.Finding, error) {
	fs, _, err := g.chainChecked(ctx, repo, s)
	return fs, err
}

// chainChecked is CheckChain, which also returns the digests whose signatures
// it checked with some key, in snapshot order.
func (g *Gate) chainChecked(ctx context.Context, repo name.Repository, s *snapshot.Snapshot) ([]findings.Finding, []string, error) {
	subjects := sign.SubjectsIn(s, g.Signed)
	fs, err := sign.Verify(ctx, repo, subjects, g.Keys, sign.VerifyOptions{Registry: g.Registry, Concurrency: g.Concurrency})
	if err != nil {
		return nil, nil, err
	}
	checked := map[v1.Hash]bool{}
	if len(g.Keys) > 0 {
		for _, sub := range subjects {
			checked[sub.Digest] = true
		}
	}
	sc, err := g.supplyChain(ctx, repo, s, checked)
	if err != nil {
		return nil, nil, err
	}
	var digests []string
	for _, sub := range sign.SubjectsIn(s, sign.ScopeAll) {
		if checked[sub.Digest] {
			digests = append(digests, sub.Digest.String())
		}
	}
	return append(fs, sc...), digests, nil
}

// hasKeys reports whether the gate requires any signature: keys of its
// own or of a supply-chain entry.
func (g *Gate) hasKeys() bool {
	return len(g.Keys) > 0 || slices.ContainsFunc(g.SupplyChain, func(r Requirement) bool { return len(r.Keys) > 0 })
}
