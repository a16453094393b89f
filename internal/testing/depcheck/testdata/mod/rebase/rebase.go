// Package rebase imports the CLI: an import back up the layers.
package rebase

import (
	"example.com/m/cli"
	"example.com/m/index"
)

// Name is the package's name.
const Name = cli.Name + index.Name
