// Package release makes an imgctl release with imgctl itself: it
// cross-compiles imgctl for every release platform with the version
// stamped in, packs the archives and checksums.txt that the install action
// downloads, builds imgctl's own multi-platform image (Linux on distroless,
// Windows on nanoserver ltsc2022 and ltsc2025) with imgctl build, gates it
// with imgctl verify, signs it with imgctl sign and writes the release
// notes from imgctl inspect and verify. The real release and the dry run
// (make release-dry-run) run the same Run; only the Config differs.
//
// It runs imgctl's commands through Config.Imgctl (cli.Execute, in
// process) or else the binary it compiled for the host: it does not import
// the CLI, and takes its version stamp from internal/version.
package release
