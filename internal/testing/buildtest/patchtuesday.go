package buildtest

import (
	"fmt"

	"github.com/imgctl/imgctl/platform"
)

// NextRevision returns osVersion with its revision one higher: the same
// Windows build's next monthly update.
func NextRevision(osVersion string) (string, error) {
	v, err := platform.ParseVersion(osVersion)
	if err != nil {
		return "", err
	}
	if !v.HasRevision {
		return "", fmt.Errorf("os.version %q has no revision", osVersion)
	}
	v.Revision++
	return v.String(), nil
}

// PushNextRevision is the next Patch Tuesday: it pushes to ref, a base tag
// such as Bases.Nanoserver2025, a nanoserver-like image one revision above
// osVersion (the same build), and returns the new os.version. Images built
// FROM ref are then stale: `imgctl bases` exits 1 and `imgctl rebase` moves
// them onto the new image.
func PushNextRevision(ref, osVersion string) (string, error) {
	next, err := NextRevision(osVersion)
	if err != nil {
		return "", err
	}
	img, err := NanoserverLike(next)
	if err != nil {
		return "", err
	}
	if err := push(ref, img); err != nil {
		return "", err
	}
	return next, nil
}
