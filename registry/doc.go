// Package registry is imgctl's one way to talk to container registries,
// in the spirit of go-containerregistry's remote package: every verb makes
// one Client per run (functional options: keychain, --insecure, a transport
// hook for tests, jobs, retry timing, logger) and every library package
// reads and writes through it. No other package of imgctl builds an HTTP
// request or go-containerregistry remote options; cosign's registry code
// gets its options from Client.Remote.
//
// What a Client does per command run:
//   - through package transport, what every request goes through: one
//     handshake per registry with every scope declared up front (Scope),
//     one retry policy (Retry-After honoured within a cap, content fetched
//     by digest checked, manifests over 4 MiB refused), the plain-HTTP
//     rule;
//   - reads (Get, Head, Describe, Fetch, Snapshot, Layer), writes through a
//     Copier (one-POST mounts, uploads, exact-bytes PUTs), the tag rule
//     (CheckTag), Publish (children first, tag last, then one HEAD to read
//     the tag back: ErrTagChanged), CopyArtifacts and PutReferrer;
//   - one judgement of what registries answer, in package transport so
//     that go-containerregistry's and cosign's requests get it too: which
//     404 is "absent" (ErrUnexpectedNotFound) and which refused tag PUT is
//     the registry's immutability (ImmutableTagError, ErrTagExists);
//   - the sentinel errors of registry conditions, those of the transport
//     re-exported as the same variables, and
//     IsRegistryError, which tells a failure to talk to a registry from a
//     judgement of what it served.
package registry
