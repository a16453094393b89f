package snapshot

import (
	v1 "github.com/google/go-containerregistry/pkg/v1"
	specs "github.com/opencontainers/image-spec/specs-go/v1"
)

// Annotations BuildKit puts on attestation manifest descriptors.
const (
	// AnnotationReferenceType marks an attestation descriptor in an index;
	// its value is AttestationManifest.
	AnnotationReferenceType = "vnd.docker.reference.type"
	// AnnotationReferenceDigest names the digest of the attested manifest.
	AnnotationReferenceDigest = "vnd.docker.reference.digest"
	// AttestationManifest is the value of AnnotationReferenceType.
	AttestationManifest = "attestation-manifest"
)

// What BuildKit writes into an attestation manifest: one in-toto statement
// per layer, each layer annotated with its statement's predicate type.
const (
	// InTotoMediaType is the media type of an in-toto statement layer.
	InTotoMediaType = "application/vnd.in-toto+json"
	// AnnotationPredicateType is the layer annotation naming the
	// predicate type of the statement the layer holds.
	AnnotationPredicateType = "in-toto.io/predicate-type"
	// PredicateSLSAProvenanceV1 is the predicate type of SLSA provenance
	// v1, which BuildKit and imgctl rebase write.
	PredicateSLSAProvenanceV1 = "https://slsa.dev/provenance/v1"
	// PredicateSLSAProvenancePrefix starts every SLSA provenance predicate
	// type (v0.2 and v1): buildx's imagetools reads a layer as provenance
	// by this prefix.
	PredicateSLSAProvenancePrefix = "https://slsa.dev/provenance/"
	// PredicateSPDX is the predicate type of an SPDX SBOM statement.
	PredicateSPDX = "https://spdx.dev/Document"
)

// The OCI annotations that record a variant's base image, on its manifest
// and its index descriptor. build writes them, rebase and bases read and
// update them, policy checks them.
const (
	// AnnotationBaseName is the base reference, e.g.
	// mcr.microsoft.com/windows/nanoserver:ltsc2025.
	AnnotationBaseName = specs.AnnotationBaseImageName
	// AnnotationBaseDigest is the digest of the base manifest the variant
	// was built on.
	AnnotationBaseDigest = specs.AnnotationBaseImageDigest
)

// IsAttestation reports whether an index entry is a BuildKit attestation
// manifest: by its reference annotation, or by the unknown/unknown platform
// BuildKit gives it. Engines never select one.
func IsAttestation(d v1.Descriptor) bool {
	return d.Annotations[AnnotationReferenceType] == AttestationManifest || IsAttestationPlatform(d.Platform)
}

// IsAttestationPlatform reports whether a descriptor platform is the
// unknown/unknown platform BuildKit gives attestation manifests.
func IsAttestationPlatform(p *v1.Platform) bool {
	return p != nil && p.OS == "unknown" && p.Architecture == "unknown"
}

// Subject returns the digest an attestation descriptor refers to.
func Subject(d v1.Descriptor) (v1.Hash, bool) {
	h, err := v1.NewHash(d.Annotations[AnnotationReferenceDigest])
	return h, err == nil
}
