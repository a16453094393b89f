// Package kube links a test harness.
package kube

import "example.com/m/internal/testing/regtest"

// Name is the package's name.
const Name = regtest.Name
