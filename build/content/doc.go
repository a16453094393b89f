// Package content moves and reads the content around each variant's
// solve, for every variant, Linux ones included: before the solve, the
// layers of its resolved bases are pre-mounted into the tag's repository
// (Premounter; each base's manifest read from the daemon that resolved
// it, else from the registry), and after it, what the solve pushed is read
// back from the daemon's content store (Daemon, ReadExported) and checked
// against its bases (CheckBaseLayers). It also has the builder pull a base
// only the builder reaches and streams its layers from the content store
// (PullThroughBuilder, DaemonLayer). None of this is the graft's: package
// graft uses it for Windows variants, package build for all of them, and
// what they share is BuildKit's content store and the tag's repository.
package content
