// Package index merges per-OS images and indexes into one image index
// without losing os.version, and removes variants from an index.
//
// Every entry keeps its descriptor's platform (os, architecture, variant,
// os.version, os.features) and annotations. An entry whose descriptor has no
// platform, every single-image source, and every Windows descriptor without
// os.version get the platform from the image config, so the index always
// carries the os.version nodes need to pick a variant.
//
// # Order
//
// The index is sorted so that the same inputs, in any order, give the same
// digest:
//
//  1. linux entries, by architecture, variant, then digest;
//  2. windows entries, newest first as platform.CompareNewestFirst orders
//     them: by build, then revision (numerically); entries without
//     os.version follow, then unreadable os.versions (as strings), each by
//     architecture, variant, then digest;
//  3. entries of any other OS (and entries without a platform), by os,
//     architecture, variant, os.version, then digest;
//  4. attestation manifests, in the order of their subjects, then by digest.
//
// # Duplicates
//
// Two different manifests with the same platform.Key (os/arch/variant, and
// the build for Windows) are refused with ErrDuplicatePlatform. With
// PreferNewest the newest is kept instead: for Windows the greater
// os.version (numerically); otherwise, and on a tie, the later config
// `created`; on a further tie the entry from the later source (sources count
// in the order given, entries of an index source in their index order). The
// same manifest given twice is kept once, silently.
//
// # Attestations
//
// BuildKit attestation manifests (platform unknown/unknown with the
// vnd.docker.reference annotations) are kept with their annotations when
// their subject is in the index, and dropped with a note otherwise.
//
// # Publishing
//
// Create and Remove copy each child into the target repository by its exact
// manifest bytes: a child already there (a HEAD answers, or it was read from
// that repository) is not uploaded again; blobs are mounted across
// repositories of one registry (registry.Copier: one POST per blob and no
// HEAD first) and streamed with bounded concurrency from other registries;
// the index is PUT only once every child is present, so a failure leaves
// nothing published. An
// existing tag is never overwritten unless Options.Force is set; a tag that
// already points at the same index is left alone. Non-distributable (foreign)
// layers are not copied, as with any go-containerregistry write.
//
// The package never prints: progress goes to Options.Logger and what it
// changed on the way is returned in Plan.Notes.
package index
