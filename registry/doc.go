// Package registry is imgctl's one way to talk to container registries,
// in the spirit of go-containerregistry's remote package: every verb makes
// one Client per run (functional options: keychain, --insecure, a transport
// hook for tests, jobs, retry timing, logger) and every library package
// reads and writes through it. No other package of imgctl builds an HTTP
// request or go-containerregistry remote options; cosign's registry code
// gets its options from Client.Remote.
//
// What a Client does per command run:
//   - one handshake per registry: one GET /v2/ and, for token auth, one
//     token request with every scope declared up front (Scope);
//   - one retry policy: bounded exponential backoff on transient failures
//     and on 408, 429 and 5xx, Retry-After honoured within a cap, content
//     fetched by digest checked against it, manifests over 4 MiB refused;
//   - the plain-HTTP rule: loopback registries over plain HTTP, others only
//     with --insecure;
//   - reads (Get, Head, Describe, Fetch, Snapshot, Layer), writes through a
//     Copier (one-POST mounts, uploads, exact-bytes PUTs), the tag rule
//     (CheckTag), Publish (children first, tag last), CopyArtifacts and
//     PutReferrer;
//   - the sentinel errors of registry conditions, declared once here.
package registry
