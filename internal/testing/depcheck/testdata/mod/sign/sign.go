// Package sign writes to a registry itself instead of through registry.
package sign

import (
	"example.com/m/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Sign writes with go-containerregistry's remote.Write.
func Sign() error {
	_ = registry.Name
	return remote.Write("x")
}
