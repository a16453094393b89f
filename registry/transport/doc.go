// Package transport is what every request of imgctl to a registry goes
// through, as go-containerregistry keeps its own in remote/transport: one
// Session per command run holds the guarded, retrying round tripper (the
// plain-HTTP rule, one retry policy with Retry-After honoured within a
// cap, manifests and small blobs read whole and checked against their
// digest, manifests over 4 MiB refused), one handshake per registry with
// every scope declared up front, and the one judgement of what registries
// answer (which 404 is "absent", which refused tag PUT is the registry's
// immutability), so that go-containerregistry's and cosign's requests get
// it too. Package registry builds its Client on a Session; other packages
// reach registries through registry.
package transport
