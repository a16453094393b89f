// Package cli is the CLI.
package cli

import "example.com/m/registry"

// Name is the package's name.
const Name = "cli" + registry.Name
