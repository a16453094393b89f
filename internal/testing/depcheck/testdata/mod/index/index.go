// Package index imports only what its row allows.
package index

import "example.com/m/registry"

// Name is the package's name.
const Name = "index" + registry.Name
