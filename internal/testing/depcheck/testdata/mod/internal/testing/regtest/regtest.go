// Package regtest is a harness: it may import the product, speak HTTP and
// write to registries.
package regtest

import (
	"net/http"

	"example.com/m/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Name is the package's name.
const Name = "regtest" + registry.Name

// Seed writes a fixture.
func Seed() error { return remote.Write("x", remote.WithTransport(http.DefaultTransport)) }
