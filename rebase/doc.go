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
//
// # Provenance
//
// Each rebased variant gets a new attestation manifest in BuildKit's layout
// (an OCI image manifest whose config says os and architecture "unknown",
// one application/vnd.in-toto+json layer annotated in-toto.io/predicate-type;
// its index descriptor has platform unknown/unknown and the
// vnd.docker.reference.type and .digest annotations naming the new
// manifest), so that buildx imagetools, docker and policy engines read it
// as they read BuildKit's. It holds an in-toto v1 statement about the new
// manifest (subject: the target tag as a package URL with the platform, and
// the digest) with an SLSA provenance v1 predicate:
//
//   - buildDefinition.buildType is BuildType;
//   - externalParameters: the source reference, the target tag, the
//     variant's platform and its base's name;
//   - resolvedDependencies: the variant before the rebase (DependencySource,
//     with the source index digest), the old base's and the new base's image
//     for the platform (DependencyOldBase, DependencyNewBase: the base name as
//     a package URL, and the digest), and each old attestation manifest of
//     the variant (DependencyAttestation, with its predicate types);
//   - runDetails.builder: id Options.BuilderID (DefaultBuilderID when unset)
//     and version {"imgctl": Options.Version};
//   - runDetails.metadata: a random invocation id, and the times the run
//     started and the statement was made.
//
// The variant's old attestations (BuildKit's provenance, an SBOM) leave the
// index with their subject: an attestation that points at a manifest no
// longer in the index is one that tools cannot place, and two attestation
// manifests for one subject make buildx's loader show one of them at
// random. The new provenance names them by digest in the source
// repository instead, where the source index keeps them as long as a tag
// points at it: rebase publishes a new tag and never changes the source's
// (tags are immutable), so keep the source tag for as long as the chain of
// provenance matters. When the target is that same repository (the monthly
// job), they resolve there. Into another repository they are not copied:
// an untagged copy is kept by nothing, and a registry that deletes
// untagged manifests would collect it, so it would cost requests and keep
// nothing.
//
// The old SBOM is not carried over, and no new one is written: it lists the
// files and packages of the old base, which the rebase replaced (typically
// to fix them), and rebase reads no layer to list the new base's. Carrying
// it forward against the new digest would let scanners report the old
// base's packages for the new image. It stays readable through the old
// attestation manifest; a current SBOM needs a build with --sbom. A policy
// that requires an SBOM therefore refuses a rebased variant until then.
//
// The output is a function of the inputs, so that two runs of the same
// rebase (a rerun month, a second team, a dry run) give the same digests:
// the provenance records Options.SourceDateEpoch or else the new base's
// creation time, never the wall clock, and an invocation id derived from
// the source index, the target and the digests. A repeated run onto a tag
// that already holds the same images takes that index's attestations in
// place of new ones and pushes nothing.
//
// The package never prints: progress goes to Options.Logger and what it
// changed is returned in Result.Notes. Result.Snapshot gives verify the
// pushed index without reading it back.
package rebase
