package build

import (
	"fmt"
	"strings"
)

// Provenance modes, as BuildKit's attest:provenance takes them.
const (
	// ProvenanceMin records the build's sources and materials, not its
	// build args, secrets ids or LLB (buildx's default).
	ProvenanceMin = "min"
	// ProvenanceMax also records the build definition and the build
	// args.
	ProvenanceMax = "max"
)

// Frontend attributes that ask BuildKit for attestations; the daemon
// (provenance, and an SBOM the frontend made none of) and the Dockerfile
// frontend (SBOM, with its stages and context) read them.
const (
	AttrProvenance = "attest:provenance"
	AttrSBOM       = "attest:sbom"
)

// Provenance asks BuildKit to attach a SLSA provenance attestation (SLSA
// v1 predicate) to every image of every variant, Windows included.
type Provenance struct {
	// Mode is ProvenanceMin or ProvenanceMax.
	Mode string
	// BuilderID, when set, is the predicate's runDetails.builder.id (a
	// URI naming the CI system that ran the build, which a policy can
	// require); BuildKit writes none otherwise.
	BuilderID string
}

// SBOM asks BuildKit to attach an SPDX SBOM to every image of every
// variant. BuildKit runs the generator image on the build platform
// (Linux) against each image's root filesystem: for a Windows image that
// is the tree a Linux snapshotter unpacks, its files under their C:\ paths
// without the Files/ prefix, and no registry hives.
type SBOM struct {
	// Generator is the scanner image (BuildKit's scanner protocol); empty
	// means BuildKit's default, docker/buildkit-syft-scanner.
	Generator string
	// BaseReference (--sbom base=reference) records each Windows base by
	// reference, with its operating system, instead of scanning its files:
	// a Windows variant keeps the graft, the scanner sees the stage's own
	// files on the placeholder, and what the placeholder showed it of the
	// base (content-less skeleton files) is taken out of the SBOM. Linux
	// variants are scanned whole as without it. See docs/sbom-windows.md
	// for what the scanner finds in a Windows base.
	BaseReference bool
}

// SBOM base modes, as --sbom base=MODE takes them.
const (
	// SBOMBaseScan scans the base's files (BuildKit's plain path).
	SBOMBaseScan = "scan"
	// SBOMBaseReference records a Windows base by reference.
	SBOMBaseReference = "reference"
)

// attestAttrs are the frontend attributes of o's attestations, in
// BuildKit's attest:TYPE=key=value,... form.
func attestAttrs(o *Options) map[string]string {
	attrs := map[string]string{}
	if p := o.Provenance; p != nil {
		v := "mode=" + p.Mode
		if p.BuilderID != "" {
			v += "," + csvField("builder-id", p.BuilderID)
		}
		attrs[AttrProvenance] = v
	}
	if s := o.SBOM; s != nil {
		attrs[AttrSBOM] = ""
		if s.Generator != "" {
			attrs[AttrSBOM] = csvField("generator", s.Generator)
		}
	}
	return attrs
}

// csvField writes key=value for BuildKit's CSV attribute parser
// (go-csvvalue), quoting the field when the value holds a comma or a
// quote. go-csvvalue only reads CSV, so the quoting is written here.
func csvField(key, value string) string {
	f := key + "=" + value
	if !strings.ContainsAny(value, `,"`) {
		return f
	}
	return `"` + strings.ReplaceAll(f, `"`, `""`) + `"`
}

// validateAttestations checks o's attestation options before anything is
// contacted.
func validateAttestations(o *Options) error {
	if p := o.Provenance; p != nil && p.Mode != ProvenanceMin && p.Mode != ProvenanceMax {
		return fmt.Errorf("%w: provenance mode %q: want %s or %s", ErrInvalidOptions, p.Mode, ProvenanceMin, ProvenanceMax)
	}
	return nil
}

// NeedsBaseFiles reports whether the build needs the bases' files on the
// builder whatever else could spare them: an SBOM scanner reads the whole
// root filesystem of each image, base included, so an SBOM build takes
// BuildKit's plain path, which pulls the bases, unless the SBOM records
// the Windows bases by reference (SBOM.BaseReference).
func (o *Options) NeedsBaseFiles() bool {
	return o.SBOM != nil && !o.SBOM.BaseReference
}

// sbomNote is the note a build with an SBOM prints.
const sbomNote = "SBOM: the scanner reads each image's whole filesystem, so the builder downloads every base (BuildKit's plain path); --sbom base=reference records a Windows base by reference instead"

// sbomReferenceNote is the note of --sbom base=reference.
const sbomReferenceNote = "SBOM: each Windows base is recorded by reference (its operating system and digest), not scanned; Linux bases are scanned"
