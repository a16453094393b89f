package sign

import (
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sigstore/cosign/v2/pkg/cosign"
)

func TestLoadPrivateKey(t *testing.T) {
	t.Parallel()
	k, _ := testKeys(t)
	a := k.pair
	if _, err := LoadPrivateKey(a.Private, []byte("wrong")); !errors.Is(err, ErrWrongPassword) {
		t.Fatalf("wrong password: %v, want ErrWrongPassword", err)
	}
	if _, err := LoadPrivateKey([]byte("not a key"), []byte("pw")); !errors.Is(err, ErrInvalidKey) {
		t.Fatalf("garbage: %v, want ErrInvalidKey", err)
	}
	if _, err := LoadPrivateKey(a.Public, []byte("pw")); !errors.Is(err, ErrInvalidKey) {
		t.Fatalf("public key as private: %v, want ErrInvalidKey", err)
	}
	// Older cosign wrote the same encryption under another PEM type.
	p, _ := pem.Decode(a.Private)
	old := pem.EncodeToMemory(&pem.Block{Type: cosign.CosignPrivateKeyPemType, Bytes: p.Bytes})
	if _, err := LoadPrivateKey(old, []byte("pw")); err != nil {
		t.Fatalf("ENCRYPTED COSIGN PRIVATE KEY: %v", err)
	}
	if _, err := LoadPublicKey("x.pub", a.Private); !errors.Is(err, ErrInvalidKey) {
		t.Fatalf("private key as public: %v, want ErrInvalidKey", err)
	}
}

func TestWriteKeyPair(t *testing.T) {
	t.Parallel()
	k, _ := testKeys(t)
	a := k.pair
	dir := t.TempDir()
	priv, pub := filepath.Join(dir, "cosign.key"), filepath.Join(dir, "cosign.pub")
	if err := WriteKeyPair(a, priv, pub); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(priv); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("private key file: %v %v", fi, err)
	}
	if _, err := LoadPublicKeyFile(pub); err != nil {
		t.Fatal(err)
	}
	if err := WriteKeyPair(a, priv, pub); !errors.Is(err, ErrKeyExists) {
		t.Fatalf("second write: %v, want ErrKeyExists", err)
	}
}
