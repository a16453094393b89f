package buildtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// ImgctlBinary builds ./cmd/imgctl of this module into a temporary
// directory and returns the binary's path. It builds with the flags of
// `make vet` and of the release (CGO_ENABLED=0, -trimpath), never go's
// defaults: the go command keys compiles by their flags, and CI runs
// `make vet` first, so with the same flags every dependency is in the
// build cache already and only imgctl is linked (seconds), where the
// default flags compiled every dependency once more (minutes on two cores,
// in each test package that built imgctl).
//
// release.Compile builds with the same flags, for a release; it is not
// called here because the cli package's own tests, which use this, cannot
// import internal/tools/release (it imports cli).
func ImgctlBinary(t testing.TB) string {
	t.Helper()
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "imgctl")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/imgctl")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/imgctl: %v\n%s", err, out)
	}
	return bin
}
