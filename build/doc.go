// Package build drives BuildKit for imgctl: it splits a build into
// variants, assigns them to BuildKit nodes, solves them and publishes one
// index. The parts that need no driver live below it: package
// build/variant plans the variants, package build/nodes addresses the
// daemons and assigns the variants to them, package build/content
// pre-mounts each variant's base layers and reads back what its solve
// pushed, package build/skeleton makes and caches the skeletons of Windows
// base layers, and package build/graft builds Windows variants without
// their base. One Build's state (the plan, the options, the registry
// client, the connections, the pre-mounts' and grafts' Copier and the
// skeletons) is one struct that its steps share.
//
// # Preflight
//
// The Dockerfile checks live in package lint. Prepare (and so Build) runs
// lint.Preflight for every variant before it contacts a daemon, and takes
// each variant's final bases from lint.FinalBases; findings come back as a
// *lint.Error.
//
// # Variants
//
// Build solves one Dockerfile several times, concurrently:
// one solve for all non-Windows platforms together, and one windows/amd64
// solve per Windows Server LTSC release (Options.Variants.Windows; see
// variant.PlanVariants). Each Windows
// variant is built FROM its own base: the Dockerfile declares
//
//	ARG WINDOWS_BASE=mcr.microsoft.com/windows/nanoserver:ltsc2022
//	FROM ${WINDOWS_BASE} AS final-windows
//
// and Build sets the build arg WINDOWS_BASE per variant, from
// Options.WindowsBases (--windows-base ltsc2022=REF,ltsc2025=REF), else from
// Options.WindowsBaseTemplate (--windows-base-template
// REG/nanoserver:{ltsc}, where {ltsc} becomes the release name), else from
// variant.DefaultWindowsBaseTemplate. With one Windows variant and an explicit
// --build-arg WINDOWS_BASE, that value wins. Each Windows solve asks BuildKit
// for windows/amd64 with its base's full os.version, never the release's
// 10.0.BUILD, which would replace the base's os.version in the image config
// (see Resolving the bases); WINDOWS_BASE is what tells the variants apart
// in the Dockerfile; lint's windows-base-release rule refuses, before
// anything is solved, a Windows stage that does not take its base from it
// while several releases are built, or whose base's tag names another
// release. Build refuses a base
// whose os.version is not of the variant's release: before solving, from
// the base's config as the builder resolved it (see Resolving the bases),
// and again from the built configs, before anything is tagged.
//
// # Resolving the bases
//
// The builder pulls the bases, so the builder resolves them: a build
// whose daemon reaches docker.io, gcr.io or mcr.microsoft.com only
// through the registry mirrors of its buildkitd.toml (an air-gapped site,
// a pull-through cache against rate limits, a BuildKit pod that reaches
// registries the CI runner cannot) builds with imgctl as it does with
// buildctl. Before solving, Build runs on every daemon one internal
// gateway build (client.Build with SolveOpt.Internal, so not in the
// daemon's build history) whose function calls ResolveImageConfig for
// each final base and platform of the variants that daemon builds. The
// daemon's resolver applies its mirrors, TLS and plain-HTTP settings; the
// credentials come from the client session, the same auth attachable the
// solves get. ResolveImageConfig answers with the digest the reference
// points at (an index, or an image) and the config of the image its
// platform match takes, not that image's manifest digest.
//
// Build pins the base to that top-level digest (see Pinning) and takes
// os.version from the config. A Windows base is resolved for the
// platform windows/amd64 with the os.version of the release's build
// (10.0.20348 for ltsc2022): containerd's matcher in BuildKit honours it
// when it picks an index child, and the solve then asks for the base's
// full os.version (windows(10.0.20348.4297)/amd64), so that the frontend
// takes the same child and the image config keeps the base's os.version
// (BuildKit writes a requested os.version into the config). TARGETOSVERSION
// is therefore the base's os.version in a Windows solve.
//
// One case needs more than the builder gives. For a 26100 host the
// matcher accepts builds 20348 to 26100 and keeps the first in index
// order, and Microsoft's multi-build lists put the older build first; the
// builder cannot be asked for a build. When the config of a Windows base
// is of another build than the release's, Build reads the index the
// builder resolved (by digest, from the daemon's content store, where the
// resolver put it), picks the child of the release's build, has the
// builder resolve that child by digest, and pins the child. Only when the
// daemon does not hold the index does Build read it from its registry
// directly, and it says so in a note (Options.Note; imgctl prints it on
// stderr). A base without an image of the build is refused
// (ErrBaseMismatch) before anything is solved.
//
// # Publishing, and what it costs the registry
//
// Each solve pushes its result by digest into the target repository (no
// tag). Build then reads what was pushed (the index or manifest, each
// manifest and config) from the daemon's content store over the same gRPC
// connection, not back from the registry, and index.PublishPrepared PUTs
// one index at the tag with every child's platform, os.version included,
// taken from its config. A single solve of several platforms, none
// Windows, is already that index: BuildKit pushes it to the tag itself
// (Plan.tagsDirectly), with the index annotations. Nothing is tagged
// unless every solve succeeded.
//
// imgctl's own registry traffic is one handshake per registry
// (one registry.Client), one HEAD of the tag before anything is solved,
// one mount POST per base layer when a base shares the tag's registry
// (see Base layers) and the index PUT. It reads no base: the daemons
// resolve them (see Resolving the bases), one resolution per distinct base
// reference and platform, which on a warm daemon costs the base's registry
// one HEAD of the tag. internal/tools/bench/RESULTS.md compares this with raw buildctl.
//
// # Base layers
//
// BuildKit's push uploads the layers of a base it had to pull (a plain
// COPY needs the base's files) even when the base sits in another
// repository of the same registry: the pulled layer carries no
// distribution-source label, so containerd's pusher has no repository to
// mount from (build/content's premount.go has the code path). Before each
// solve, Build mounts every distributable layer of the variant's resolved
// final bases from the base's repository into the tag's (content.Premounter
// through a registry.Copier, one POST per layer, each digest once per
// build, at most the client's Jobs at a time), reading the base manifest
// from the daemon, which holds it since it resolved the base. The push
// HEADs each blob first and skips what is there. A refused mount is
// cancelled, logged at debug and left to BuildKit. After the solve, Build
// checks that each image lists its base's layer digests unchanged and says
// so in a note when it does not.
//
// # Pinning
//
// Each base is pinned for the solve by the digest the builder resolved,
// through the Dockerfile frontend's named contexts (context:NAME=
// docker-image://NAME@DIGEST): the image is built on exactly the base its
// annotations name, even if the tag moves meanwhile, and BuildKit, finding
// the digest in its cache, does not resolve the tag again.
//
// # Scale-out builds
//
// Options.Nodes spread a build over several daemons (imgctl build --node
// PLATFORM=ADDR, or --builders FILE read by nodes.LoadBuilders, or a
// docker buildx builder instance; nodes.Select has the precedence).
// nodes.AssignNodes gives
// every platform its most specific node, else the fallback Options.Builder;
// Linux platforms on one daemon stay in one solve, platforms on different
// daemons are split into their own. Build connects to every daemon, solves
// on all of them concurrently, fans their solve status into Options.Status
// (each vertex prefixed with its node) and merges the results into one
// index. A RUN in a Windows stage is allowed only for variants whose node
// is mapped to a Windows platform and has a Windows worker
// (nodes.NativeWindows).
//
// # Base annotations
//
// BuildKit does not record which image a manifest was built FROM, and
// imgctl rebase needs it. Build sets, through the image exporter's
// annotation-manifest[PLATFORM].KEY attributes,
//
//   - org.opencontainers.image.base.name: the base reference after ARG
//     expansion, fully qualified (e.g. index.docker.io/library/alpine:3);
//   - org.opencontainers.image.base.digest: the digest the base is pinned
//     to: what the reference pointed at when the builder resolved it (the
//     index, for a base tag that is an index or a manifest list, else the
//     image), or the index child Build chose itself (see Resolving the
//     bases). OCI allows either; imgctl rebase and imgctl bases resolve a
//     recorded index to the child of the variant's platform and build.
//
// A stage FROM scratch gets neither annotation.
//
// # Attestations
//
// Options.Provenance and Options.SBOM become BuildKit's own frontend
// attributes attest:provenance (mode=min|max, builder-id) and attest:sbom
// (generator=IMAGE) on every solve, Windows variants included; imgctl
// build's defaults are those of docker buildx build (provenance mode=min,
// no SBOM). Each solve's result is then an index with one attestation
// manifest per image (vnd.docker.reference.type=attestation-manifest,
// vnd.docker.reference.digest naming the image), which the merge keeps
// next to its image; a tagged-directly index is BuildKit's own. The
// provenance (SLSA v1) names the bases as pinned (see Pinning) among its
// resolved dependencies.
//
// The SBOM generator runs on the daemon's build platform (Linux) with the
// image's root filesystem mounted. For a Windows image that is the tree a
// Linux snapshotter unpacks from the Windows layers: every file under its
// C:\ path with the Files/ prefix stripped (C:\app\hello.exe is
// /app/hello.exe) and no Hives/ entries. A scanner can list and hash those
// files, the base's included, and find what it can recognise from files
// alone; it cannot list Windows components, updates or MSI-installed
// software, which live in the registry hives and the servicing store
// (a hive file under Windows/System32/config is a file to it, not a
// registry). An SBOM needs the bases' files, so a build with one always
// pulls them (NeedsBaseFiles; no graft) and says so in a note.
//
// # Windows variants without their base
//
// A Windows stage has no RUN, so it depends on its base only through the
// base's config, its layer positions and its directory tree. Each Windows
// variant is solved FROM a placeholder that has exactly those: the base's
// config and, per base layer, a skeleton (every tar entry of the layer,
// each file emptied; skeleton.Maker). BuildKit pulls the skeletons, applies
// them as a Windows image, and its own Windows differ writes the stage's
// layers in the Windows layout from the same tree the real base would give.
// The result is then grafted onto the base (graft.Graft): base layers in,
// skeletons out, diff_ids the base's, the provenance rewritten to name the
// base. The builder downloads no base layer. Skeletons are cached locally
// and in the registry (skeleton.RegistryCache: the tag's repository, or
// Options.SkeletonRepository), so a fresh runner reads kilobytes to
// megabytes instead of the base; a base only the builder reaches (its
// mirrors) is pulled once through the builder and read from its content
// store (content.PullThroughBuilder). The plain path (the builder pulls and
// unpacks the base) is taken with Options.WindowsPlain and, with a note
// saying why, where a graft could differ from it (plainReason) or when
// neither imgctl nor the builder can read the base.
//
// # Offline builds and # syntax
//
// A `# syntax=` directive makes BuildKit's built-in Dockerfile frontend
// forward the build to a frontend image, which needs the network. Build
// always uses the daemon's built-in frontend (dockerfile.v0): it blanks the
// directive line (keeping line numbers) in a copy of the Dockerfile that it
// sends instead of the original. Options.SyntaxImage asks for a frontend
// image explicitly (gateway.v0 with source=REF).
//
// The package never prints: solve status goes to Options.Status, which the
// caller draws (imgctl uses BuildKit's progressui), and log lines go to
// Options.Logger.
package build
