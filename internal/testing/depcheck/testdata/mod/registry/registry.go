// Package registry speaks HTTP and writes: the only package allowed to.
package registry

import (
	"net/http"

	"example.com/m/snapshot"
	ggcr "github.com/google/go-containerregistry/pkg/v1/remote"
)

// Name is the package's name.
const Name = "registry" + snapshot.Key

// Write writes with remote options.
func Write() error { return ggcr.Write("x", ggcr.WithTransport(http.DefaultTransport)) }
