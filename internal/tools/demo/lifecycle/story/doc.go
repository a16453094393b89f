// Package story is the life of one image with imgctl, end to end on one
// machine: on two registries (CI and release, the second with the
// referrers API) and a real buildkitd, from the synthetic bases of
// internal/testing/buildtest, it builds examples/hello for linux/amd64,
// linux/arm64 and windows/amd64 (ltsc2022 and ltsc2025) with provenance,
// signs it, promotes it under a policy, then lives through the next Patch
// Tuesday: a new ltsc2025 base revision appears under the same tag,
// imgctl bases reports the image stale, imgctl rebase moves it without a
// rebuild, imgctl verify --nodes checks it against a sample cluster
// (examples/nodes.json), and the rebased index is signed and promoted to
// a new release tag. Each step prints what changed, read from imgctl's
// own JSON output (inspect, resolve, verify).
//
// Run tells it. The lifecycle demo (internal/tools/demo/lifecycle, `make
// demo-lifecycle`) runs it on a registry and a buildkitd of its own; the
// CLI's end-to-end test runs it on the registry and the daemon of its own
// full build (Config.Shared), so that the story's build is all cached.
// The story runs imgctl through Config.Imgctl (cli.Execute): it does not
// import the CLI, whose tests import it.
package story
