package index

import "example.com/m/verify"

// Options links verify only in the Windows build.
var Options = verify.Options
