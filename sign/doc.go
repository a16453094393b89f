// Package sign writes and checks cosign signatures of images and indexes,
// offline, with a key pair in cosign's own format (GenerateKeyPair,
// LoadPrivateKey, LoadPublicKey).
//
// Sign writes cosign v2's legacy format (a sha256-<hex>.sig tag, and
// optionally OCI 1.1 referrers), cosign v3's Sigstore bundle as a referrer,
// or both (Options.Format); nothing goes to a transparency log. Verify
// checks the subjects SubjectsIn lists for a Scope against every store,
// with the keys alone, and fails closed: signatures that were read and are
// missing or wrong are findings, signatures that could not be read are an
// error. Merge is the hook registry.CopyArtifacts uses to merge signature
// tags. The package never prints; progress goes to an injected
// *slog.Logger. docs/supply-chain.md ("How sign stores and checks
// signatures") has the layouts and what is checked.
package sign
