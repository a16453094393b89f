//go:build !nokubernetes

package buildx

// The kubernetes driver brings in client-go (see docs/builders.md for what
// it costs); build imgctl with -tags nokubernetes to leave it out, and an
// instance with driver kubernetes is then refused with ErrUnsupportedDriver.
import _ "github.com/docker/buildx/driver/kubernetes"
