// Package regtest provides an in-process OCI registry with request accounting
// and fault injection, plus deterministic image fixtures (Linux, Windows with
// the real BuildKit layer layout, HostProcess, foreign layers, attestations).
//
// The core API returns errors so that it can be used outside of tests (for
// example by demo programs); the Must* helpers and New take a testing.TB.
package regtest
