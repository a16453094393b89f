// Package build drives BuildKit for imgctl: it splits a build into
// variants, assigns them to BuildKit nodes, solves them and publishes one
// index.
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
// solve per Windows Server LTSC release (Options.Windows). Each Windows
// variant is built FROM its own base: the Dockerfile declares
//
//	ARG WINDOWS_BASE=mcr.microsoft.com/windows/nanoserver:ltsc2022
//	FROM ${WINDOWS_BASE} AS final-windows
//
// and Build sets the build arg WINDOWS_BASE per variant, from
// Options.WindowsBases (--windows-base ltsc2022=REF,ltsc2025=REF), else from
// Options.WindowsBaseTemplate (--windows-base-template
// REG/nanoserver:{ltsc}, where {ltsc} becomes the release name), else from
// DefaultWindowsBaseTemplate. With one Windows variant and an explicit
// --build-arg WINDOWS_BASE, that value wins. Each Windows solve asks BuildKit
// for plain windows/amd64: a requested os.version would replace the base's
// full os.version in the image config, so TARGETOSVERSION stays empty and
// WINDOWS_BASE is the way to tell the variants apart; Preflight's
// windows-base-release rule refuses, before anything is solved, a Windows
// stage that does not take its base from it while several releases are
// built, or whose base's tag names another release. Build refuses a base
// whose os.version is not of the variant's release: before solving when
// the base is an index (its descriptors say), else from the built config,
// before anything is tagged.
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
// (one registry.Client), one HEAD of the tag before anything is solved, one
// GET per distinct base reference and the index PUT. Each base is then
// pinned for the solve by the digest that GET returned, through the
// Dockerfile frontend's named contexts (context:NAME=docker-image://
// NAME@DIGEST): the image is built on exactly the base its annotations
// name, even if the tag moves meanwhile, and BuildKit does not resolve the
// tag again. bench/RESULTS.md compares this with raw buildctl.
//
// # Scale-out builds
//
// Options.Nodes spread a build over several daemons (imgctl build --node
// PLATFORM=ADDR, or --builders FILE read by LoadBuilders). AssignNodes gives
// every platform its most specific node, else the fallback Options.Builder;
// Linux platforms on one daemon stay in one solve, platforms on different
// daemons are split into their own. Build connects to every daemon, solves
// on all of them concurrently, fans their solve status into Options.Status
// (each vertex prefixed with its node) and merges the results into one
// index. A RUN in a Windows stage is allowed only for variants whose node
// is mapped to a Windows platform and has a Windows worker (NativeWindows).
//
// # Base annotations
//
// BuildKit does not record which image a manifest was built FROM, and
// imgctl rebase needs it. Build resolves the final stage's base for every
// platform before solving and sets, through the image exporter's
// annotation-manifest[PLATFORM].KEY attributes,
//
//   - org.opencontainers.image.base.name: the base reference after ARG
//     expansion, fully qualified (e.g. index.docker.io/library/alpine:3);
//   - org.opencontainers.image.base.digest: the digest of the base's
//     platform manifest (the child of a base index that matches the
//     platform, not the index digest), whose layers are the lower layers of
//     the built image. rebase compares layers against this manifest.
//
// A stage FROM scratch gets neither annotation.
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
