// Package fleet rebases, verifies, signs and promotes a list of release
// images in one run (imgctl patch): for each release reference it decides
// staleness as rebase.Check does, rebases a stale index to a staging tag
// whose name is a function of the source digest and the new release tag,
// verifies it with a policy gate, signs it, and promotes it to the next
// free release tag through policy's Promote, which checks it again. State
// lives in the registry only: the promoted index carries the source
// digest in an annotation (AnnotationSource), and a rerun finds an earlier
// promotion from the repository's tags. See docs/patch.md.
package fleet
