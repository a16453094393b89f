package buildtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// scannerPackage is the SBOM scanner that ScannerImage packs.
const scannerPackage = modulePath + "/internal/testing/buildtest/scanner"

// ScannerTool is the SPDX creator ("Tool: ...") of the documents the
// scanner writes.
const ScannerTool = "imgctl-test-scanner"

// ScannerImage returns a linux/amd64 image whose entrypoint is
// internal/testing/buildtest/scanner, a BuildKit SBOM scanner that lists every
// regular file of the scanned tree with its sha256 in an SPDX 2.3
// document, wrapped in an in-toto statement (predicateType
// https://spdx.dev/Document). Use it as --sbom=generator=IMAGE once pushed
// (PushScanner): BuildKit runs it on the build platform, Linux, for every
// variant, Windows included. The program is compiled once per process,
// statically (CGO_ENABLED=0), from this module's source.
func ScannerImage() (v1.Image, error) {
	bin, err := scannerBinary()
	if err != nil {
		return nil, err
	}
	return scannerImageOf(bin)
}

// scannerImageOf returns a linux/amd64 image whose entrypoint, /scanner,
// is the executable exe, with a world-writable /tmp for its output.
func scannerImageOf(exe []byte) (v1.Image, error) {
	layer, err := memLayer(func(w tarWriter) error {
		if err := w.dir("tmp", 0o1777); err != nil {
			return err
		}
		return w.file("scanner", 0o755, exe)
	})
	if err != nil {
		return nil, fmt.Errorf("making scanner layer: %w", err)
	}
	return newImage(v1.Platform{OS: "linux", Architecture: "amd64"}, v1.Config{
		Entrypoint: []string{"/scanner"},
		WorkingDir: "/",
	}, layer)
}

// PushScanner pushes ScannerImage to ref (host:port/repo:tag on a
// plain-HTTP loopback registry) and returns ref's repository @ the pushed
// digest, the value for --sbom=generator=.
func PushScanner(ref string) (string, error) {
	img, err := ScannerImage()
	if err != nil {
		return "", err
	}
	return pushByDigest(ref, img)
}

// PushScannerBinary pushes, to ref, a linux/amd64 scanner image whose
// entrypoint is the executable at bin (a BuildKit scanner such as
// internal/tools/syftscanner's), and returns ref's repository @ its
// digest, for --sbom=generator=.
func PushScannerBinary(ref, bin string) (string, error) {
	exe, err := os.ReadFile(bin)
	if err != nil {
		return "", err
	}
	img, err := scannerImageOf(exe)
	if err != nil {
		return "", err
	}
	return pushByDigest(ref, img)
}

// pushByDigest pushes img to ref (on a plain-HTTP registry) and returns
// ref's repository @ img's digest.
func pushByDigest(ref string, img v1.Image) (string, error) {
	if err := push(ref, img); err != nil {
		return "", err
	}
	d, err := img.Digest()
	if err != nil {
		return "", err
	}
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		return "", err
	}
	return r.Context().Digest(d.String()).String(), nil
}

// scannerBinary compiles the scanner for linux/amd64 and returns the
// executable's bytes.
var scannerBinary = sync.OnceValues(func() ([]byte, error) {
	root, err := ModuleRoot()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "imgctl-scanner-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "scanner")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, scannerPackage)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building %s: %w\n%s", scannerPackage, err, msg)
	}
	return os.ReadFile(out)
})
