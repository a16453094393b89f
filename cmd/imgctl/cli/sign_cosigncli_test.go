package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/imgctl/imgctl/internal/testing/disttest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/internal/testing/signtest"
	"github.com/imgctl/imgctl/sign"
)

// cosignKeyPair writes a second encrypted cosign key pair (password
// relSignPassword), for signatures by another key.
func cosignKeyPair(t *testing.T) (string, string) {
	t.Helper()
	kp := regtest.Must(sign.GenerateKeyPair([]byte(relSignPassword)))(t)
	dir := t.TempDir()
	key, pub := filepath.Join(dir, "other.key"), filepath.Join(dir, "other.pub")
	if err := sign.WriteKeyPair(kp, key, pub); err != nil {
		t.Fatal(err)
	}
	return key, pub
}

// TestCosignCLIsVerifyDefaultSignatures: what `imgctl sign --key` writes
// by default verifies with the real cosign v2 and v3 CLIs in their usual
// offline invocation (`cosign verify --key cosign.pub
// --insecure-ignore-tlog=true REF`, no TUF, Rekor or Fulcio reachable), on
// the distribution registry with htpasswd auth (no referrers API) and on a
// registry with the referrers API, for: the index; a child (sign
// --recursive); an image also signed with another key, checked with each
// key; a promoted copy; and an index cosign v2's own `sign` appended to.
// Not parallel: the distribution registry sets DOCKER_CONFIG.
func TestCosignCLIsVerifyDefaultSignatures(t *testing.T) {
	relWriteEnv(t)
	clis := []signtest.CosignCLI{signtest.Cosign(t, "v2"), signtest.Cosign(t, "v3")}
	key, pub := relSignKey(t)
	key2, pub2 := cosignKeyPair(t)
	pw := "COSIGN_PASSWORD=" + relSignPassword
	dist := disttest.New(t, disttest.Options{})
	api := regtest.New(t, regtest.WithReferrers())
	for _, reg := range []struct {
		name string
		host registryHost
	}{{"distribution", dist}, {"referrers API", api}} {
		t.Run(reg.name, func(t *testing.T) {
			ii := regtest.Must(regtest.MultiOSIndex())(t)
			src := push(t, reg.host, "app:1", ii)
			childRef := reg.host.Host() + "/app@" + regtest.Must(ii.IndexManifest())(t).Manifests[0].Digest.String()
			if out, errOut, code := run(t, "sign", src, "--key", key, "--recursive"); code != 0 {
				t.Fatalf("sign: exit %d\n%s%s", code, out, errOut)
			}
			if out, errOut, code := run(t, "sign", src, "--key", key2); code != 0 {
				t.Fatalf("sign with another key: exit %d\n%s%s", code, out, errOut)
			}
			promoted := reg.host.Host() + "/release/app:1"
			if out, errOut, code := run(t, "promote", src, promoted, "--key", pub); code != 0 {
				t.Fatalf("promote: exit %d\n%s%s", code, out, errOut)
			}
			appended := push(t, reg.host, "app:appended", regtest.Must(regtest.MultiOSIndex())(t))
			if out, errOut, code := run(t, "sign", appended, "--key", key); code != 0 {
				t.Fatalf("sign: exit %d\n%s%s", code, out, errOut)
			}
			if out, err := clis[0].Run(t, []string{pw}, "sign", "--key", key2, "--tlog-upload=false", "--allow-http-registry", "-y", appended); err != nil {
				t.Fatalf("cosign v2 sign: %v\n%s", err, out)
			}
			for _, c := range []struct{ what, ref, pub string }{
				{"the index", src, pub},
				{"a child", childRef, pub},
				{"the index, with the other key", src, pub2},
				{"the promoted copy", promoted, pub},
				{"an index cosign appended to, imgctl's key", appended, pub},
				{"an index cosign appended to, cosign's key", appended, pub2},
			} {
				for _, cli := range clis {
					if _, err := cli.VerifyOffline(t, c.pub, c.ref); err != nil {
						t.Errorf("%s: %v", c.what, err)
					}
				}
			}
		})
	}
}

// TestCosignCLIFormatMatrix measures what each --format gives up: the
// real cosign v2 and v3 CLIs verify an index signed in that format, in
// their usual offline invocation, on a registry with the referrers API.
// legacy verifies with both; bundle and both are refused by cosign v2.6,
// which takes the bundle path once it finds a bundle and then needs a
// trusted root. This is the table sign.DefaultFormat documents.
func TestCosignCLIFormatMatrix(t *testing.T) {
	relWriteEnv(t)
	key, pub := relSignKey(t)
	want := map[string]map[string]bool{
		"legacy": {"v2": true, "v3": true},
		"bundle": {"v2": false, "v3": true},
		"both":   {"v2": false, "v3": true},
	}
	reg := regtest.New(t, regtest.WithReferrers())
	for _, f := range sign.Formats {
		ref := push(t, reg, "app:"+string(f), regtest.Must(regtest.MultiOSIndex())(t))
		if out, errOut, code := run(t, "sign", ref, "--key", key, "--format", string(f)); code != 0 {
			t.Fatalf("sign --format %s: exit %d\n%s%s", f, code, out, errOut)
		}
		for _, major := range signtest.CosignCLIs {
			out, err := signtest.Cosign(t, major).VerifyOffline(t, pub, ref)
			switch ok := want[string(f)][major]; {
			case ok && err != nil:
				t.Errorf("--format %s: %v", f, err)
			case !ok && err == nil:
				t.Errorf("--format %s: cosign %s verified it offline; update sign.DefaultFormat's table\n%s", f, major, out)
			case !ok && !strings.Contains(out, "trusted root is required"):
				t.Errorf("--format %s: cosign %s refused it for another reason: %v", f, major, err)
			}
		}
	}
}

// TestVerifyScopeOfCosignSignedIndex: an index signed the way cosign users
// sign it (cosign v3's `cosign sign --key` on the index: the index alone,
// as a Sigstore bundle) passes verify --key and promote --key, which check
// the digest the reference names as cosign verify does, and the report
// names that digest; --signed all requires every child and refuses it,
// naming the children it checked; after imgctl sign --recursive it passes.
func TestVerifyScopeOfCosignSignedIndex(t *testing.T) {
	relWriteEnv(t)
	key, pub := relSignKey(t)
	reg := regtest.New(t, regtest.WithReferrers())
	ii := regtest.Must(regtest.MultiOSIndex())(t)
	src := push(t, reg, "app:1", ii)
	top := regtest.Must(ii.Digest())(t).String()
	children := 0 // the images: attestation manifests are not signed
	for _, d := range regtest.Must(ii.IndexManifest())(t).Manifests {
		if d.Annotations["vnd.docker.reference.type"] != "attestation-manifest" {
			children++
		}
	}
	v3 := signtest.Cosign(t, "v3")
	if out, err := v3.Run(t, []string{"COSIGN_PASSWORD=" + relSignPassword}, "sign", "--key", key, "--tlog-upload=false",
		"--use-signing-config=false", "--allow-http-registry", "-y", src); err != nil {
		t.Fatalf("cosign v3 sign: %v\n%s", err, out)
	}
	if _, err := v3.VerifyOffline(t, pub, src); err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Passed     bool
		Signatures struct {
			Scope   string
			Digests []string
		}
		Findings []struct{ Rule, Platform string }
	}
	out, errOut, code := run(t, "verify", src, "--key", pub, "-o", "json")
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || !rep.Passed {
		t.Fatalf("verify --key of the index cosign signed: exit %d\n%s%s", code, out, errOut)
	}
	if rep.Signatures.Scope != "reference" || len(rep.Signatures.Digests) != 1 || rep.Signatures.Digests[0] != top {
		t.Fatalf("checked %+v, want the index %s alone", rep.Signatures, top)
	}
	out, errOut, code = run(t, "verify", src, "--key", pub, "--signed", "all", "-o", "json")
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != ExitFailed || rep.Passed {
		t.Fatalf("verify --signed all: exit %d, want 1\n%s%s", code, out, errOut)
	}
	unsigned := 0
	for _, f := range rep.Findings {
		if f.Rule == sign.RuleUnsigned && f.Platform != "" {
			unsigned++
		}
	}
	if rep.Signatures.Scope != "all" || len(rep.Signatures.Digests) != 1+children || unsigned != children {
		t.Fatalf("--signed all: checked %+v, %d unsigned children; want the index and its %d children, each unsigned", rep.Signatures, unsigned, children)
	}
	if out, errOut, code := run(t, "promote", src, reg.Host()+"/release/app:1", "--key", pub); code != 0 {
		t.Fatalf("promote --key: exit %d\n%s%s", code, out, errOut)
	}
	if _, _, code := run(t, "promote", src, reg.Host()+"/release/app:2", "--key", pub, "--signed", "all"); code != ExitFailed {
		t.Fatalf("promote --signed all: exit %d, want 1", code)
	}
	if out, errOut, code := run(t, "sign", src, "--key", key, "--recursive"); code != 0 {
		t.Fatalf("sign --recursive: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := run(t, "verify", src, "--key", pub, "--signed", "all"); code != 0 {
		t.Fatalf("verify --signed all after sign --recursive: exit %d\n%s%s", code, out, errOut)
	}
	if _, _, code := run(t, "verify", src, "--key", pub, "--signed", "some"); code != ExitError {
		t.Fatalf("--signed some: exit %d, want 2", code)
	}
	if _, errOut, code := run(t, "verify", src, "--signed", "all"); code != ExitError || !strings.Contains(errOut, "without a key") {
		t.Fatalf("--signed all without a key: exit %d, want 2\n%s", code, errOut)
	}
}
