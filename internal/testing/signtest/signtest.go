// Package signtest makes signing keys for tests of sign, policy and the CLI:
// an ECDSA P-256 key held in memory, without cosign's encrypted key file
// (whose scrypt takes seconds under -race), and its public key as PEM and
// as a cosign.pub file.
package signtest

import (
	"crypto"
	"os"
	"path/filepath"
	"testing"

	"github.com/sigstore/cosign/v2/pkg/cosign"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
)

// Key is an in-memory signing key.
type Key struct {
	// Signer signs and verifies with the private key.
	Signer signature.SignerVerifier
	// Public is the public key in PEM.
	Public []byte
	// PublicPath is a cosign.pub file holding Public, in t.TempDir().
	PublicPath string
}

// NewKey makes a key, failing the test on error.
func NewKey(t testing.TB) Key {
	t.Helper()
	priv, err := cosign.GeneratePrivateKey()
	if err != nil {
		t.Fatal(err)
	}
	sv, err := signature.LoadECDSASignerVerifier(priv, crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := cryptoutils.MarshalPublicKeyToPEM(priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cosign.pub")
	if err := os.WriteFile(path, pub, 0o644); err != nil {
		t.Fatal(err)
	}
	return Key{Signer: sv, Public: pub, PublicPath: path}
}
