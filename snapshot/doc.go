// Package snapshot holds what imgctl reads of a reference, as values: an
// index (or a single manifest) with each child's manifest and config, and
// the annotation keys that give entries their meaning (BuildKit's
// attestation references, the OCI base-image annotations).
//
// It is a value package: it imports nothing of imgctl, so that verify can
// judge a Snapshot without knowing how it was read, and every package that
// writes or reads those annotations names them from one place. Load reads
// a Snapshot through go-containerregistry's v1 interfaces; the registry
// package hands it a remote index, tests a local one.
package snapshot
