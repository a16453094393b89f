// Package snapshot is a value package that links the network only with
// -tags nokubernetes.
package snapshot

// Key is an annotation key.
const Key = "k"
