//go:build tools

// Package tools pins the cosign CLIs the tests verify imgctl's signatures
// with, as users run them: cosign v2 (bin/cosign-v2) and v3
// (bin/cosign-v3), built by `make cosign` from this module, so that their
// dependencies never move imgctl's go.mod.
package tools

import (
	_ "github.com/sigstore/cosign/v2/cmd/cosign"
	_ "github.com/sigstore/cosign/v3/cmd/cosign"
)
