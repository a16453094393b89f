package buildtest

import (
	"strconv"
	"strings"

	"github.com/imgctl/imgctl/rebase"
)

// BuildKitBuildType is the buildDefinition.buildType of the SLSA v1
// provenance BuildKit v0.34 writes.
const BuildKitBuildType = "https://github.com/moby/buildkit/blob/master/docs/attestations/slsa-definitions.md"

// Builders for SupplyChainPolicy: BuildKit's provenance (imgctl build), and
// imgctl rebase's with its default builder id.
const (
	BuildKitBuilder = "buildType: " + BuildKitBuildType
	RebaseBuilder   = `{builderId: "` + rebase.DefaultBuilderID + `", buildType: "` + rebase.BuildType + `"}`
)

// SupplyChainPolicy returns a policy file (the format of
// examples/policy.yaml) for the index examples/hello builds: both LTSC
// targets and, for every image, a provenance attestation from one of
// builders (each a YAML value of the builders list, such as
// "buildType: "+BuildKitBuildType), an SBOM when sbom is set, and a
// signature by each of keys (public key paths) when any are given.
func SupplyChainPolicy(sbom bool, keys []string, builders ...string) string {
	var b strings.Builder
	b.WriteString("targets: [ltsc2022, ltsc2025]\nsupplyChain:\n  - platforms: [\"*\"]\n    provenance: true\n    builders:\n")
	for _, s := range builders {
		b.WriteString("      - " + s + "\n")
	}
	b.WriteString("    sbom: " + strconv.FormatBool(sbom) + "\n")
	if len(keys) > 0 {
		b.WriteString("    keys: [" + strings.Join(keys, ", ") + "]\n")
	}
	return b.String()
}
