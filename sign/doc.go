// Package sign writes and checks cosign signatures of images and indexes,
// offline, with a key pair in cosign's own format.
//
// # Where signatures live
//
// Sign writes in one of two formats, or both (Options.Format):
//
//   - legacy, cosign v2's: a simple-signing payload and its signature
//     appended to the image tagged sha256-<hex>.sig in the repository of the
//     signed manifest (a signature already present is not added twice).
//     With Options.Referrers it also stores one OCI 1.1 referrer per
//     signature (config media type
//     application/vnd.dev.cosign.artifact.sig.v1+json, subject the signed
//     manifest), the layout `cosign sign --registry-referrers-mode=oci-1-1`
//     writes; it refuses, before writing anything, a registry that does not
//     serve the referrers API.
//   - bundle, cosign v3's default: a Sigstore bundle v0.3 whose DSSE
//     envelope signs an in-toto statement (predicate
//     https://sigstore.dev/cosign/sign/v1, subject the manifest digest),
//     made with sigstore-go and stored as a referrer with artifactType
//     application/vnd.dev.sigstore.bundle.v0.3+json; on a registry without
//     the referrers API the sha256-<hex> referrers tag fallback lists it,
//     as cosign writes it. A bundle by the same key is not added twice.
//
// Nothing is sent to a transparency log or a timestamp authority:
// signatures carry no Rekor entry, and Verify checks them with the tlog and
// SCT checks off, as `cosign verify --insecure-ignore-tlog` does.
//
// Both the .sig tag and the referrers tag fallback are rewritten with each
// signature added; a registry that holds them immutable (ECR, Harbor, ACR)
// refuses, and Sign and Merge say so (registry.ErrTagExists), never
// "unsigned".
//
// # What is checked
//
// Verify checks the subjects it is given: SubjectsIn lists them for a
// Scope, the digest the reference names by default (as cosign verify,
// policy-controller and Kyverno check it: an index's signature covers its
// children by digest), and with ScopeAll every child of an index but
// attestation manifests too. It reads every store: the .sig tag with
// cosign's own reader, checked with cosign.VerifyImageSignature and the
// simple claim verifier (the signed payload must name the exact manifest
// digest), and the bundle referrers, checked with sigstore-go against the
// key alone. Every key must verify at least one signature in some store.
// BuildKit attestation manifests are not checked: Sign signs them only
// with Options.Attestations, tools that attach attestations later do not,
// and their subjects are checked. A nested index is checked itself but its
// children are not.
//
// Verify fails closed, and tells a policy failure from an infrastructure
// fault: signatures that were read and are missing or do not verify are
// findings (unsigned, bad-signature); signatures that could not be read (a
// registry or network error, see registry.IsRegistryError) are an error,
// never a pass and never a finding, so that the CLI exits 2, not 1.
//
// Copying signatures between repositories is registry.CopyArtifacts;
// Merge is the hook that merges cosign signature tags there.
//
// The package never prints; progress goes to an injected *slog.Logger.
package sign
