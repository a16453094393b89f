// Package mcrtest publishes the patch-level fixture: a Windows base
// repository laid out like mcr.microsoft.com/windows/nanoserver
// (regtest.PushMCRBase) and app indexes built on its revisions. The
// patch-level e2e tests (cmd/imgctl/cli) and the bench's bases-patchlevel
// case both use it.
package mcrtest

import (
	"fmt"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/snapshot"
)

// Nanoserver is the base repository, laid out like
// mcr.microsoft.com/windows/nanoserver.
const Nanoserver = "windows/nanoserver"

// Registry is a registry the fixture pushes to.
type Registry interface {
	Host() string
	PushTag(s string, x any, opts ...remote.Option) (name.Reference, v1.Hash, error)
}

// PushBase pushes Nanoserver: 14 months of monthly revisions of builds
// 20348 and 26100 (October 2025 to November 2026, each created 5 days
// before its Patch Tuesday), one out-of-band revision of each in May 2026
// (two weeks after its Patch Tuesday), three revisions of another build
// (17763), every revision under 10.0.BUILD.REV and its -amd64 twin, and
// the moving tags ltsc2022 and ltsc2025 (with twins) at November's.
func PushBase(reg Registry) (*regtest.MCRBase, error) {
	last := time.Date(2026, time.November, 1, 0, 0, 0, 0, time.UTC)
	may := time.Date(2026, time.May, 1, 0, 0, 0, 0, time.UTC)
	return regtest.PushMCRBase(reg, Nanoserver, map[string]uint32{"ltsc2022": 20348, "ltsc2025": 26100},
		regtest.MCRRevisions(20348, 4000, last, 14, 5, 50, may, 14),
		regtest.MCRRevisions(26100, 3000, last, 14, 5, 40, may, 14),
		regtest.MCRRevisions(17763, 8000, last, 3, 5, 30, time.Time{}, 0),
	)
}

// PushApp pushes app:tag, an index of two Windows variants built on the
// bases' revisions v2022 and v2025, with BuildKit's base annotations (the
// moving tag and the revision's index digest, as BuildKit records what it
// resolved) and os.version from the base config. It returns the reference.
func PushApp(reg Registry, b *regtest.MCRBase, tag, v2022, v2025 string) (string, error) {
	var es []regtest.Entry
	for _, v := range []struct{ moving, version string }{{"ltsc2022", v2022}, {"ltsc2025", v2025}} {
		base := b.Images[v.version]
		if base == nil {
			return "", fmt.Errorf("no base revision %s", v.version)
		}
		img, err := regtest.WindowsImage("", regtest.WithBase(base), regtest.WithSeed(tag), regtest.WithAnnotations(map[string]string{
			snapshot.AnnotationBaseName:   reg.Host() + "/" + Nanoserver + ":" + v.moving,
			snapshot.AnnotationBaseDigest: b.Indexes[v.version].String(),
		}))
		if err != nil {
			return "", err
		}
		es = append(es, regtest.Entry{Image: img})
	}
	idx, err := regtest.Index(es...)
	if err != nil {
		return "", err
	}
	ref, _, err := reg.PushTag("app:"+tag, idx)
	if err != nil {
		return "", err
	}
	return ref.String(), nil
}
