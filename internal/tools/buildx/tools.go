//go:build tools

// Package tools pins the buildx CLI the tests run as users run it
// (bin/buildx, built by `make buildx-cli` from this module at the buildx
// version imgctl's go.mod links), so that its dependencies never move
// imgctl's go.mod.
package tools

import _ "github.com/docker/buildx/cmd/buildx"
