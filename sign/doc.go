// Package sign writes and checks cosign signatures of images and indexes,
// offline, with a key pair in cosign's own format.
//
// # Where signatures live
//
// Sign stores each signature where cosign looks for it: in the image tagged
// sha256-<hex>.sig in the repository of the signed manifest, appending to the
// signatures already there (a signature already present is not added
// twice). With Options.Referrers it also stores one OCI 1.1 referrer per
// signature (config media type application/vnd.dev.cosign.artifact.sig.v1+json,
// subject the signed manifest), the layout `cosign sign
// --registry-referrers-mode=oci-1-1` writes; it refuses, before writing
// anything, a registry that does not serve the referrers API.
//
// Nothing is sent to a transparency log or a timestamp authority: signatures
// carry no Rekor bundle, and Verify checks them with the tlog and SCT checks
// off, as `cosign verify --insecure-ignore-tlog` does.
//
// # What is checked
//
// Verify checks the index (or single image) and every child of an index
// the way cosign.VerifyImageSignatures does, with cosign's own reader of
// the sha256-<hex>.sig tag, cosign.VerifyImageSignature and the simple
// claim verifier: the signed payload must name the exact manifest digest,
// and every key must verify at least one signature. BuildKit attestation
// manifests are not checked: `cosign sign --recursive` signs them but tools
// that attach attestations later do not, and their subjects are checked. A
// nested index is checked itself but its children are not.
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
