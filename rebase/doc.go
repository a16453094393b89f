// Package rebase moves every variant of a published index onto the current
// image of its base, without a rebuild and without reading a layer: the
// monthly job after Patch Tuesday, when nanoserver and servercore get a new
// revision of the same build and Linux bases move too.
//
// # Bases
//
// A variant names its base in the org.opencontainers.image.base.name and
// org.opencontainers.image.base.digest annotations, on its manifest (as
// `imgctl build` writes them) or on its index descriptor; Options.Bases
// gives a base per OS for variants that have neither. The base's current
// image for a variant is the child of the base reference of the same build
// (platform.SameBuild): os, architecture, variant and, for Windows, the
// build; when the base has no child of that build any more, its newest
// child (platform.CompareNewestFirst), a build change for a Windows variant
// with an os.version. A recorded digest may name the base's platform
// manifest or its index; an index is resolved to the child for the
// variant's platform. Check reports each variant's base and whether it is
// stale.
//
// # Rebasing one variant
//
// The variant's first layers must be exactly the old base's (by digest),
// and its config's first diff_ids and history entries the old base's;
// otherwise Rebase stops with ErrBaseMismatch naming the variant. The new
// manifest has the new base's layer descriptors followed by the variant's
// own layer descriptors, byte for byte; its config has the new base's
// diff_ids and history entries in place of the old base's and the new
// base's os.version and os.features; everything else in both documents is
// kept as it was, including fields go-containerregistry does not model. The
// index descriptor gets the new os.version and os.features and the
// base.digest annotation is updated on the manifest and on the descriptor.
// The documents are edited as JSON rather than built with mutate.Rebase;
// see rewrite for why.
//
// Media types stay consistent within a manifest: when the new base's layers
// are Docker and the image is OCI (or the reverse), their descriptors get
// the equivalent media type of the image's family. Only the descriptor
// changes: a Docker and an OCI gzip layer are the same bytes, so the digest
// and the blob stay the same. Types without an equivalent (zstd in a Docker
// manifest) are refused with ErrMediaType.
//
// A Windows variant never moves to another build unless
// Options.AllowBuildChange is set (ErrBuildChange).
//
// # Publishing
//
// The new index is published by index.PublishPrepared, with the index
// package's rules: entries in its order, a tag that exists refused
// (registry.ErrTagExists) unless it already points at the same index, and
// nothing tagged unless every child is present. Base layers are mounted from
// the base's repository and app layers from the source repository, never
// read by the client; only the new configs, which are small, are uploaded.
// A base in another registry cannot be mounted: its layers are streamed,
// with a note. When every variant is current nothing is pushed.
// Attestations of rebased variants are dropped with a note: they describe
// the image before the rebase.
//
// The package never prints: progress goes to Options.Logger and what it
// changed is returned in Result.Notes. Result.Snapshot gives verify the
// pushed index without reading it back.
package rebase
