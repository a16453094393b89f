package sign

import "errors"

// Rule names of the findings Verify reports, stable for scripts and
// policies.
const (
	// RuleUnsigned: a manifest has no signature at all.
	RuleUnsigned = "unsigned"
	// RuleBadSignature: a manifest has signatures but none verifies with a
	// required key, or they could not be checked.
	RuleBadSignature = "bad-signature"
)

// Rules lists the rule names this package reports.
var Rules = []string{RuleUnsigned, RuleBadSignature}

// Sentinel errors, checked with errors.Is.
var (
	// ErrWrongPassword is returned when an encrypted private key does not
	// decrypt with the password given.
	ErrWrongPassword = errors.New("wrong password for the private key")
	// ErrInvalidKey is returned for a key file that is not a cosign key.
	ErrInvalidKey = errors.New("invalid key")
	// ErrKeyExists is returned by WriteKeyPair when a key file exists.
	ErrKeyExists = errors.New("key file exists")
)
