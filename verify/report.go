// Package verify checks a published index before promotion: that every
// Windows variant carries an os.version that target nodes accept, and that
// the engines those nodes run pick a variant that starts. It reads the index,
// the child manifests and their configs, never a layer, and returns findings
// (EvaluateLayers judges the layer entries a caller read for verify --layers);
// it depends on neither build nor index so the gate stays independent of the
// thing it gates.
//
// EvaluateHosts is the judge of what runs where: it simulates the engines of
// a list of hosts on a snapshot and returns data, not findings. Evaluate
// turns its targets into hosts and words the results; package kube does the
// same for the nodes of a cluster.
package verify

import (
	"errors"

	"github.com/imgctl/imgctl/findings"
)

// Rule names, stable for scripts and policies.
const (
	RuleMissingOSVersion       = "missing-os-version"
	RuleMalformedOSVersion     = "malformed-os-version"
	RuleOSVersionMismatch      = "os-version-mismatch"
	RulePlatformMismatch       = "platform-mismatch"
	RuleNoVariantForTarget     = "no-variant-for-target"
	RuleUnreachableVariant     = "unreachable-variant"
	RuleDuplicatePlatform      = "duplicate-platform"
	RuleEngineDisagreement     = "engine-disagreement"
	RuleOrderingQuirk          = "ordering-quirk"
	RuleOrderPicksOlder        = "order-picks-older"
	RuleShellFormEntrypoint    = "shell-form-entrypoint"
	RuleContainerAdministrator = "container-administrator"
	RuleForeignLayers          = "foreign-layers"
	RuleMissingPlatform        = "missing-platform"
	RuleDanglingAttestation    = "dangling-attestation"
	RuleNotAnIndex             = "not-an-index"
	RuleNoDescriptorPlatform   = "no-descriptor-platform"
	RuleNestedIndex            = "nested-index"
	// The layer rules, reported by EvaluateLayers (verify --layers).
	RuleWindowsLayerLayout = "windows-layer-layout"
	RuleLayersUnchecked    = "layers-unchecked"
	// The supply-chain rules, reported by EvaluateAttestations.
	RuleMissingProvenance = "missing-provenance"
	RuleMissingSBOM       = "missing-sbom"
	RuleUntrustedBuilder  = "untrusted-builder"
)

// Rules lists every rule name verify can report.
var Rules = []string{
	RuleMissingOSVersion, RuleMalformedOSVersion, RuleOSVersionMismatch, RulePlatformMismatch,
	RuleNoVariantForTarget, RuleUnreachableVariant, RuleDuplicatePlatform, RuleEngineDisagreement,
	RuleOrderingQuirk, RuleOrderPicksOlder, RuleShellFormEntrypoint, RuleContainerAdministrator, RuleForeignLayers,
	RuleMissingPlatform, RuleDanglingAttestation, RuleNotAnIndex, RuleNoDescriptorPlatform, RuleNestedIndex,
	RuleMissingProvenance, RuleMissingSBOM, RuleUntrustedBuilder,
	RuleWindowsLayerLayout, RuleLayersUnchecked,
}

// ErrNoMatch is returned by Resolve when the engine runs no variant.
var ErrNoMatch = errors.New("no variant matches the platform")

// TargetResult says which variant an engine selects on a target node.
type TargetResult struct {
	Target string `json:"target"`
	Build  uint32 `json:"build"`
	Engine string `json:"engine"`
	// Releases names the releases that run the engine profile, e.g.
	// "containerd 2.0.0–2.1.5" (docs/engines.md).
	Releases string `json:"releases,omitempty"`
	// Selected is the digest of the selected manifest, or "" for none.
	Selected string `json:"selected"`
	// OSVersion is the selected variant's os.version.
	OSVersion string `json:"os_version,omitempty"`
}

// Report is the result of verifying one reference.
type Report struct {
	Ref    string `json:"ref"`
	Digest string `json:"digest"`
	Passed bool   `json:"passed"`
	// Findings set Digest and Platform (an index entry's), never File,
	// Line, Stage, Object or Container: the JSON contract has no such
	// fields.
	Findings []findings.Finding `json:"findings"`
	Targets  []TargetResult     `json:"targets"`
	// Layers is what verify --layers read (EvaluateLayers); nil without it.
	Layers *LayerStats `json:"layers,omitempty"`
	// Signatures says which digests the signature check read; nil when no
	// key was given.
	Signatures *SignatureCheck `json:"signatures,omitempty"`
}

// SignatureCheck is the scope of a signature check: "reference" (the
// digest the reference names) or "all" (its children too), and the
// digests checked.
type SignatureCheck struct {
	Scope   string   `json:"scope"`
	Digests []string `json:"digests"`
}

// Errors returns the findings of error severity.
func (r *Report) Errors() []findings.Finding {
	return findings.Errors(r.Findings)
}
