package build

import (
	"fmt"

	"github.com/distribution/reference"
)

// ProvenanceFromFields reads the key=value fields of a provenance
// attestation request as buildx takes them (imgctl build --provenance,
// a bake target's attest entry of type provenance): mode (min or max) and
// builder-id. Without a mode it is max: buildx sends such a request to
// BuildKit with no mode, and BuildKit's provenance then defaults to max
// (solver/llbsolver/provenance.go). Errors wrap ErrInvalidOptions.
func ProvenanceFromFields(fields map[string]string) (*Provenance, error) {
	p := &Provenance{Mode: ProvenanceMax}
	for k, v := range fields {
		switch k {
		case "mode":
			if v != ProvenanceMin && v != ProvenanceMax {
				return nil, fmt.Errorf("%w: provenance mode must be %s or %s", ErrInvalidOptions, ProvenanceMin, ProvenanceMax)
			}
			p.Mode = v
		case "builder-id":
			p.BuilderID = v
		default:
			return nil, fmt.Errorf("%w: provenance: unknown key %q (want mode=min|max, builder-id=URI, true or false)", ErrInvalidOptions, k)
		}
	}
	return p, nil
}

// SBOMFromFields reads the key=value fields of an SBOM attestation
// request as buildx takes them: generator=IMAGE, the scanner image,
// checked with BuildKit's own parse of the name so that a bad one is
// refused before a build, and imgctl's base=scan|reference
// (SBOM.BaseReference), which BuildKit is not sent. Errors wrap
// ErrInvalidOptions.
func SBOMFromFields(fields map[string]string) (*SBOM, error) {
	sb := &SBOM{}
	for k, v := range fields {
		switch k {
		case "generator":
			if _, err := reference.ParseNormalizedNamed(v); err != nil {
				return nil, fmt.Errorf("%w: sbom generator: %w", ErrInvalidOptions, err)
			}
			sb.Generator = v
		case "base":
			switch v {
			case SBOMBaseScan:
			case SBOMBaseReference:
				sb.BaseReference = true
			default:
				return nil, fmt.Errorf("%w: sbom base %q: want %s or %s", ErrInvalidOptions, v, SBOMBaseScan, SBOMBaseReference)
			}
		default:
			return nil, fmt.Errorf("%w: sbom: unknown key %q (want generator=IMAGE, base=scan|reference, true or false)", ErrInvalidOptions, k)
		}
	}
	return sb, nil
}
