package release

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/imgctl/imgctl/internal/version"
)

// Stamp is what a release build stamps into imgctl; imgctl version reports
// it.
type Stamp struct {
	// Version is the release tag, e.g. v1.2.0.
	Version string
	// Revision is the commit the release is built from.
	Revision string
	// Time is the commit time, RFC 3339 in UTC.
	Time string
}

// LDFlags is the go build -ldflags value of a release build.
func (s Stamp) LDFlags() string { return version.StampLDFlags(s.Version, s.Revision, s.Time) }

// Compile builds imgctl (./cmd/imgctl of the module at root) for t into
// out/<os_arch>/<binary> as a release is built: CGO_ENABLED=0, -trimpath,
// the stamp in -ldflags. It returns the binary's path.
func Compile(ctx context.Context, root, out string, t Target, s Stamp) (string, error) {
	bin := filepath.Join(out, t.Dir(), t.Binary())
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", s.LDFlags(), "-o", bin, "./cmd/imgctl")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+t.OS, "GOARCH="+t.Arch)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build for %s: %w\n%s", t, err, b)
	}
	return bin, nil
}

// CheckVersion runs bin version -o json and fails unless it reports the
// stamp: the release checks the binary it can run before packing it.
func CheckVersion(ctx context.Context, bin string, s Stamp) error {
	out, err := exec.CommandContext(ctx, bin, "version", "-o", "json").Output()
	if err != nil {
		return fmt.Errorf("%s version: %w", bin, err)
	}
	var v version.Info
	if err := json.Unmarshal(out, &v); err != nil {
		return fmt.Errorf("%s version -o json: %w", bin, err)
	}
	if got := (Stamp{v.Version, v.Revision, v.Time}); got != s {
		return fmt.Errorf("%s version reports %+v, want the stamp %+v", bin, got, s)
	}
	return nil
}
