package release

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// WriteChecksums writes dir/checksums.txt in sha256sum's format, one
// "<hex>  <name>" line per file (names relative to dir, sorted), so that
// `sha256sum -c checksums.txt` checks the downloads.
func WriteChecksums(dir string, names []string) error {
	names = slices.Sorted(slices.Values(names))
	var b strings.Builder
	for _, n := range names {
		sum, err := fileSHA256(filepath.Join(dir, n))
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, n)
	}
	return os.WriteFile(filepath.Join(dir, ChecksumsName), []byte(b.String()), 0o644)
}

func fileSHA256(path string) (string, error) {
	h := sha256.New()
	if err := copyFile(h, path); err != nil {
		return "", fmt.Errorf("hashing %s: %w", filepath.Base(path), err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
