package disttest

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/crypto/bcrypt"

	"github.com/imgctl/imgctl/internal/testing/buildtest"
)

// EnvRegistry names the environment variable that points at a registry
// binary.
const EnvRegistry = "IMGCTL_REGISTRY"

// ErrNoRegistry is returned when no registry binary can be found.
var ErrNoRegistry = errors.New("distribution registry binary not found")

// Needs is what New needs, as buildtest.SkipShort names it: tests that
// call Start themselves skip with it under -short.
const Needs = "the distribution registry (bin/registry, `make registry`)"

// BinaryPath returns $IMGCTL_REGISTRY or <module root>/bin/registry, and
// ErrNoRegistry when that file does not exist.
func BinaryPath() (string, error) {
	p := os.Getenv(EnvRegistry)
	if p == "" {
		root, err := buildtest.ModuleRoot()
		if err != nil {
			return "", fmt.Errorf("%w: %w", ErrNoRegistry, err)
		}
		p = filepath.Join(root, "bin", "registry")
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%w: %w (run `make registry` in the module root, or set %s)", ErrNoRegistry, err, EnvRegistry)
	}
	return filepath.Abs(p)
}

// configYAML is the registry's configuration: filesystem storage under
// root, a unix socket, htpasswd auth, and logs at error level without the
// access log.
func configYAML(root, secret string, readOnly bool) string {
	return fmt.Sprintf(`version: 0.1
log:
  level: error
  formatter: text
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %[1]s/data
  delete:
    enabled: true
  maintenance:
    uploadpurging:
      enabled: false
    readonly:
      enabled: %[3]t
http:
  net: unix
  addr: %[1]s/registry.sock
  secret: %[2]s
auth:
  htpasswd:
    realm: disttest
    path: %[1]s/htpasswd
`, root, secret, readOnly)
}

// htpasswd returns an htpasswd line for user with a bcrypt hash of
// password at cost.
func htpasswd(user, password string, cost int) ([]byte, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(password), cost)
	if err != nil {
		return nil, fmt.Errorf("hashing the password: %w", err)
	}
	return []byte(user + ":" + string(h) + "\n"), nil
}

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
