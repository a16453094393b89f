// Package release is a tool whose row does not allow the CLI.
package release

import "example.com/m/cli"

// Name is the package's name.
const Name = cli.Name
