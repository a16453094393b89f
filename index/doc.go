// Package index merges per-OS images and indexes into one image index
// without losing os.version (Create), removes variants from an index
// (Remove), and publishes an index whose children are already prepared
// (PublishPrepared, used by build and rebase).
//
// Every Windows entry gets its os.version, from the image config when its
// descriptor has none. The entries are sorted so that the same inputs, in
// any order, give the same digest; two manifests of one platform are
// refused unless Options.Prefer picks one. Children are copied by their
// exact bytes and the index is PUT only once every child is present, so a
// failure leaves nothing published; an existing tag is never overwritten
// without Options.Force. The package never prints: progress goes to
// Options.Logger and notes are returned in Plan.Notes. docs/merge.md has
// the order, the duplicate and attestation rules, and the copy's requests.
package index
