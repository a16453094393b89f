package platform

import v1 "github.com/google/go-containerregistry/pkg/v1"

// Annotations BuildKit puts on attestation manifest descriptors.
const (
	AnnotationReferenceType   = "vnd.docker.reference.type"
	AnnotationReferenceDigest = "vnd.docker.reference.digest"
	AttestationManifest       = "attestation-manifest"
)

// IsAttestationDescriptor reports whether an index entry is a BuildKit
// attestation manifest: by its reference annotation, or by the
// unknown/unknown platform BuildKit gives it. Engines never select one.
func IsAttestationDescriptor(d v1.Descriptor) bool {
	return d.Annotations[AnnotationReferenceType] == AttestationManifest || IsAttestation(d.Platform)
}

// AttestationSubject returns the digest an attestation descriptor refers to.
func AttestationSubject(d v1.Descriptor) (v1.Hash, bool) {
	h, err := v1.NewHash(d.Annotations[AnnotationReferenceDigest])
	return h, err == nil
}
