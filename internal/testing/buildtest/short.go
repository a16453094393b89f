package buildtest

import "testing"

// SkipShort skips the test under `go test -short`, the fast loop that
// needs Go alone. needs names what the test runs that Go does not give (a
// buildkitd and runc, the distribution registry, a CLI built into bin/),
// which `make test` builds and installs; the skip message names both.
// Without -short nothing is skipped: a missing tool fails the test, so
// that a CI run cannot pass by skipping.
func SkipShort(t testing.TB, needs string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("needs %s; run `make test`", needs)
	}
}

// What the harnesses' constructors need, as SkipShort names it.
const (
	// NeedsBuildkitd is what New and StartBuildkitd need.
	NeedsBuildkitd = "buildkitd and runc (bin/buildkitd, `make buildkitd deps`)"
	// NeedsBusybox is what GolangImage, and so SeedBases, need.
	NeedsBusybox = "busybox-static (/bin/busybox, `make deps`)"
	// NeedsBuildx is what BuildxCLI returns.
	NeedsBuildx = "the buildx CLI (bin/buildx, `make buildx-cli`)"
)
