package sign

import (
	"errors"
	"fmt"

	"github.com/imgctl/imgctl/snapshot"
)

// Scope is which manifests of a reference Verify requires signatures on.
type Scope string

// Signing scopes.
const (
	// ScopeReference checks the digest the reference names, as cosign
	// verify, sigstore policy-controller and Kyverno do: a signature on an
	// index covers its children, which the index names by digest. It is
	// cosign sign's default scope too. The zero Scope is ScopeReference.
	ScopeReference Scope = "reference"
	// ScopeAll also requires a signature on every child but attestation
	// manifests (cosign sign --recursive, imgctl sign --recursive), for
	// verifiers that check children by digest on their own.
	ScopeAll Scope = "all"
)

// ErrUnknownScope is returned by ParseScope for a name it does not know.
var ErrUnknownScope = errors.New("unknown signing scope")

// ParseScope reads a scope name: reference (or empty) or all.
func ParseScope(s string) (Scope, error) {
	switch Scope(s) {
	case "", ScopeReference:
		return ScopeReference, nil
	case ScopeAll:
		return ScopeAll, nil
	}
	return "", fmt.Errorf("%w %q: want reference or all", ErrUnknownScope, s)
}

// Or returns ScopeAll when either scope is ScopeAll: a policy and a flag
// each can only widen what is checked.
func (s Scope) Or(o Scope) Scope {
	if s == ScopeAll || o == ScopeAll {
		return ScopeAll
	}
	return ScopeReference
}

// SubjectsIn lists what Verify checks in a snapshot under scope: the
// manifest the reference names, and with ScopeAll every child too
// (Subjects).
func SubjectsIn(s *snapshot.Snapshot, scope Scope) []Subject {
	if scope == ScopeAll {
		return Subjects(s)
	}
	return []Subject{{Digest: s.Digest}}
}
