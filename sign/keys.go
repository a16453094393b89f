package sign

import (
	"crypto"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/sigstore/cosign/v2/pkg/cosign"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
)

// KeyPair is a cosign key pair, PEM-encoded: the private key encrypted with
// a password (cosign's format, readable by `cosign sign --key`) and the
// public key.
type KeyPair struct {
	Private []byte
	Public  []byte
}

// GenerateKeyPair makes an ECDSA P-256 key pair with cosign's own code and
// encrypts the private key with password (which may be empty, as with
// COSIGN_PASSWORD="").
func GenerateKeyPair(password []byte) (*KeyPair, error) {
	kb, err := cosign.GenerateKeyPair(func(bool) ([]byte, error) { return password, nil })
	if err != nil {
		return nil, fmt.Errorf("generating key pair: %w", err)
	}
	return &KeyPair{Private: kb.PrivateBytes, Public: kb.PublicBytes}, nil
}

// WriteKeyPair writes kp to privPath (mode 0600) and pubPath (mode 0644).
// It never overwrites a file: an existing one gives ErrKeyExists and
// nothing is written.
func WriteKeyPair(kp *KeyPair, privPath, pubPath string) error {
	for _, p := range []string{privPath, pubPath} {
		if _, err := os.Stat(p); err == nil {
			return fmt.Errorf("%w: %s", ErrKeyExists, p)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("checking %s: %w", p, err)
		}
	}
	if err := writeNew(privPath, kp.Private, 0o600); err != nil {
		return err
	}
	if err := writeNew(pubPath, kp.Public, 0o644); err != nil {
		_ = os.Remove(privPath)
		return err
	}
	return nil
}

func writeNew(path string, b []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%w: %s", ErrKeyExists, path)
	}
	if err != nil {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// LoadPrivateKey decrypts a cosign private key (PEM type "ENCRYPTED SIGSTORE
// PRIVATE KEY", or "ENCRYPTED COSIGN PRIVATE KEY" from older cosign) with
// password. A password that does not decrypt it gives ErrWrongPassword.
func LoadPrivateKey(pemBytes, password []byte) (signature.SignerVerifier, error) {
	p, _ := pem.Decode(pemBytes)
	if p == nil {
		return nil, fmt.Errorf("%w: not a PEM file", ErrInvalidKey)
	}
	if p.Type != cosign.CosignPrivateKeyPemType && p.Type != cosign.SigstorePrivateKeyPemType {
		return nil, fmt.Errorf("%w: PEM type %q, want an encrypted cosign private key (imgctl keygen or cosign generate-key-pair)", ErrInvalidKey, p.Type)
	}
	sv, err := cosign.LoadPrivateKey(pemBytes, password, nil)
	// cosign wraps every decryption failure, which with a well-formed key
	// file means the password is wrong, as "decrypt: ...".
	if err != nil && strings.HasPrefix(err.Error(), "decrypt:") {
		return nil, fmt.Errorf("%w (%w)", ErrWrongPassword, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidKey, err)
	}
	return sv, nil
}

// Key is a public key that signatures must verify with.
type Key struct {
	// Name says where the key came from (its path), for messages.
	Name     string
	Verifier signature.Verifier
}

// LoadPublicKey reads a PEM public key (cosign.pub) as a Key named name.
func LoadPublicKey(name string, pemBytes []byte) (Key, error) {
	// cosign's signature.LoadPublicKeyRaw is these two calls; calling them
	// here keeps cosign/pkg/signature, and the Kubernetes client it links
	// (about 8 ms of package init on every imgctl start), out of the binary.
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(pemBytes)
	var v signature.Verifier
	if err == nil {
		v, err = signature.LoadVerifier(pub, crypto.SHA256)
	}
	if err != nil {
		return Key{}, fmt.Errorf("%w %s: %w", ErrInvalidKey, name, err)
	}
	return Key{Name: name, Verifier: v}, nil
}

// LoadPublicKeyFile reads a PEM public key file.
func LoadPublicKeyFile(path string) (Key, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Key{}, fmt.Errorf("reading public key: %w", err)
	}
	return LoadPublicKey(path, b)
}
