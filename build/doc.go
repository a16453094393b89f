// Package build drives BuildKit for imgctl: it checks a Dockerfile (package
// lint), splits the build into variants (one solve for the Linux platforms,
// one windows/amd64 solve per Windows Server LTSC release, each FROM its
// own base), assigns them to BuildKit daemons, solves them concurrently and
// publishes one index whose Windows entries carry their os.version. Nothing
// is tagged unless every solve succeeded.
//
// Build is the entry point and Options its configuration; Prepare runs the
// checks alone, before any daemon is contacted. The parts that need no
// driver live below it: build/variant plans the variants, build/nodes
// addresses the daemons and assigns the variants to them, build/graft
// builds Windows variants without downloading their base, build/skeleton
// makes and caches the skeletons of base layers, and build/content
// pre-mounts each variant's base and reads back what a solve pushed. The package
// never prints: solve status goes to Options.Status and log lines to
// Options.Logger. docs/build.md explains how the bases are resolved,
// pinned, pre-mounted and annotated, and what a build costs the registry.
package build
