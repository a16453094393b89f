package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/sign"

	"github.com/imgctl/imgctl/internal/testing/signtest"
)

// sigRunIn is run with stdin.
func sigRunIn(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Execute(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

// sigKey makes an in-memory key and writes its public key to a file.
func sigKey(t *testing.T) (signature.SignerVerifier, string) {
	t.Helper()
	k := signtest.NewKey(t)
	return k.Signer, k.PublicPath
}

// sigPush pushes x and, with sv, signs it and every child, attestation
// manifests included (legacy format); it returns the tag reference and the
// digest.
func sigPush(t *testing.T, reg *regtest.Registry, tag string, x any, sv signature.SignerVerifier) (string, string) {
	t.Helper()
	ref, d, err := reg.PushTag(tag, x)
	if err != nil {
		t.Fatal(err)
	}
	if sv != nil {
		if _, err := sign.Sign(context.Background(), ref.Context().Digest(d.String()), sv, sign.Options{Attestations: true}); err != nil {
			t.Fatal(err)
		}
	}
	return ref.String(), d.String()
}

// TestKeygenSignVerify runs keygen and sign with COSIGN_PASSWORD, then
// verify --key; a wrong password exits 2 and says so. Not parallel: it sets
// the environment.
func TestKeygenSignVerify(t *testing.T) {
	reg := regtest.New(t)
	prefix := filepath.Join(t.TempDir(), "release")
	t.Setenv("COSIGN_PASSWORD", "s3cret")
	if out, errOut, code := run(t, "keygen", "--output-key-prefix", prefix); code != 0 || !strings.Contains(out, prefix+".pub") {
		t.Fatalf("keygen: exit %d\n%s%s", code, out, errOut)
	}
	if _, errOut, code := run(t, "keygen", "--output-key-prefix", prefix); code != 2 || !strings.Contains(errOut, "exists") {
		t.Fatalf("keygen over existing files: exit %d %s", code, errOut)
	}
	key, pub := prefix+".key", prefix+".pub"
	ref, _ := sigPush(t, reg, "app:1", regtest.Must(regtest.MultiOSIndex())(t), nil)

	out, _, code := run(t, "verify", ref, "--key", pub, "-o", "json")
	if r := decodeReport(t, out); code != 1 || r.severity(sign.RuleUnsigned) != "error" {
		t.Fatalf("verify of an unsigned index: exit %d\n%s", code, out)
	}
	if out, errOut, code := run(t, "sign", ref, "--key", key, "--attestations"); code != 0 || strings.Count(out, "signed ") != 9 {
		t.Fatalf("sign: exit %d\n%s%s", code, out, errOut)
	}
	out, _, code = run(t, "verify", ref, "--key", pub, "-o", "json")
	if r := decodeReport(t, out); code != 0 || !*r.Passed || r.severity(sign.RuleUnsigned) != "" {
		t.Fatalf("verify of the signed index: exit %d\n%s", code, out)
	}

	t.Setenv("COSIGN_PASSWORD", "wrong")
	if _, errOut, code := run(t, "sign", ref, "--key", key); code != 2 || !strings.Contains(errOut, "wrong password") {
		t.Fatalf("wrong password: exit %d, %q", code, errOut)
	}
	os.Unsetenv("COSIGN_PASSWORD")
	if _, errOut, code := run(t, "sign", ref, "--key", key); code != 2 || !strings.Contains(errOut, "COSIGN_PASSWORD") {
		t.Fatalf("no password: exit %d, %q", code, errOut)
	}
	if out, errOut, code := sigRunIn(t, "s3cret\n", "sign", ref, "--key", key, "-o", "json"); code != 0 || !strings.Contains(out, `"signed"`) {
		t.Fatalf("password on stdin: exit %d\n%s%s", code, out, errOut)
	}
}

func TestSignUsage(t *testing.T) {
	t.Parallel()
	reg := regtest.New(t)
	ref, _ := sigPush(t, reg, "app:1", regtest.Must(regtest.MultiOSIndex())(t), nil)
	for _, args := range [][]string{
		{"sign", ref},
		{"sign", ref, "--key", filepath.Join(t.TempDir(), "missing.key")},
		{"verify", ref, "--key", filepath.Join(t.TempDir(), "missing.pub")},
		{"sign", "Not A Ref", "--key", "x"},
	} {
		if _, errOut, code := run(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, errOut)
		}
	}
}
