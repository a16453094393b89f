// Package disttest runs the CNCF distribution registry, the registry users
// run, for tests: bin/registry, built by `make registry` from the version
// that internal/tools/distribution pins in a module of its own.
//
// It differs from regtest's in-process registry where users feel it: every
// request is checked against a bcrypt htpasswd file, blobs are linked per
// repository (a blob of another repository is a 404 until it is mounted),
// and there is no referrers API.
//
// Each Registry has its own storage directory and listens on a unix socket
// in it; clients reach it through a transparent reverse proxy on 127.0.0.1
// with an ephemeral port, which records every request, takes a middleware
// (regtest.Faults works there too) and lets a test stop the registry in
// the middle of a command: Stop closes the port and every open connection
// and stops the process, as a registry that goes down would; Restart brings
// it back on the same port and storage.
//
// New writes the registry's credentials into a Docker config in a
// temporary DOCKER_CONFIG, as `docker login` would, so that imgctl finds
// them as it does in production. New fails the test, it never skips, when
// the binary is missing.
package disttest
