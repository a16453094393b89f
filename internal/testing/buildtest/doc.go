// Package buildtest runs a real buildkitd for tests and seeds the base images
// that examples/hello needs (a Go toolchain image, a distroless-like Linux base
// and nanoserver-like Windows bases) into a local registry. It never pulls from
// the network: every image is made from files on this machine.
//
// The daemon needs the buildkitd binary (IMGCTL_BUILDKITD or bin/buildkitd in
// the module root), runc on PATH, root privileges and a filesystem where
// overlayfs works. New fails the test, it does not skip, when any is missing.
package buildtest
