// Package promote copies an index that passes policy's gate to its
// release tag without changing its digest: the manifest and its children
// by their exact bytes, the attestation manifests its provenance names as
// predecessors, the signatures and referrers of all of them, then, once
// the gate's signature and attestation requirements pass at the
// destination, the tag (Run). It writes through registry only.
package promote
