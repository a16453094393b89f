package cli

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/internal/testing/disttest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/internal/testing/signtest"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/sign"
)

// signStores reports whether d carries a legacy .sig tag and how many
// Sigstore bundle referrers it has, read with go-containerregistry alone.
func signStores(t *testing.T, d name.Digest) (bool, int) {
	t.Helper()
	h := regtest.Must(v1.NewHash(d.DigestStr()))(t)
	_, err := remote.Head(registry.SignatureTag(d.Context(), h, "sig"))
	idx, rerr := remote.Referrers(d, remote.WithFilter("artifactType", sign.BundleArtifactType))
	if rerr != nil {
		t.Fatal(rerr)
	}
	im := regtest.Must(idx.IndexManifest())(t)
	return err == nil, len(im.Manifests)
}

// TestSignFormat: sign --format legacy, bundle and both (the default) store
// the signatures where each format says, on a registry with the referrers
// API and one without; verify --key accepts each with the key and refuses
// another key; a bad --format is a usage error.
func TestSignFormat(t *testing.T) {
	relWriteEnv(t)
	key, pub := relSignKey(t)
	other := signtest.NewKey(t).PublicPath
	for _, rt := range []struct {
		name string
		opts []regtest.Option
	}{{"referrers API", []regtest.Option{regtest.WithReferrers()}}, {"no referrers API", nil}} {
		for _, f := range []string{"legacy", "bundle", ""} {
			t.Run(rt.name+"/"+f, func(t *testing.T) {
				t.Parallel()
				reg := regtest.New(t, rt.opts...)
				ref, _ := sigPush(t, reg, "app:1", regtest.Must(regtest.MultiOSIndex())(t), nil)
				args := []string{"sign", ref, "--key", key, "--recursive", "-o", "json"}
				if f != "" {
					args = append(args, "--format", f)
				}
				out, errOut, code := run(t, args...)
				var res struct {
					Signed []string
					Format string
				}
				if code != 0 || json.Unmarshal([]byte(out), &res) != nil {
					t.Fatalf("sign: exit %d\n%s%s", code, out, errOut)
				}
				want := f
				if f == "" {
					want = "legacy"
				}
				if res.Format != want || len(res.Signed) != 5 {
					t.Fatalf("signed %d manifests as %q, want 5 (the index and its images) as %q", len(res.Signed), res.Format, want)
				}
				for _, s := range res.Signed {
					legacy, bundles := signStores(t, reg.MustRef(t, "app@"+s).(name.Digest))
					if legacy != (want != "bundle") || (bundles == 1) != (want != "legacy") {
						t.Fatalf("%s: .sig tag %t, %d bundles; want format %s", s, legacy, bundles, want)
					}
				}
				if out, errOut, code := run(t, "verify", ref, "--key", pub); code != 0 {
					t.Fatalf("verify --key: exit %d\n%s%s", code, out, errOut)
				}
				out, _, code = run(t, "verify", ref, "--key", other, "-o", "json")
				if r := decodeReport(t, out); code != ExitFailed || r.severity(sign.RuleBadSignature) != "error" {
					t.Fatalf("verify --key with another key: exit %d\n%s", code, out)
				}
			})
		}
	}
	t.Run("usage", func(t *testing.T) {
		reg := regtest.New(t)
		ref, _ := sigPush(t, reg, "app:1", regtest.Must(regtest.MultiOSIndex())(t), nil)
		for _, args := range [][]string{
			{"sign", ref, "--key", key, "--format", "v3"},
			{"sign", ref, "--key", key, "--format", "bundle", "--referrers"},
		} {
			if _, errOut, code := run(t, args...); code != ExitError || !strings.Contains(errOut, "format") {
				t.Errorf("%v: exit %d, want 2 naming the format (%s)", args, code, errOut)
			}
		}
	})
}

// TestSignImmutableTag: when the registry holds the .sig tag immutable (as
// ECR does for an IMMUTABLE repository), adding a second signature exits 2
// and names the tag and the immutability; nothing reads as unsigned.
func TestSignImmutableTag(t *testing.T) {
	relWriteEnv(t)
	key, _ := relSignKey(t)
	reg := regtest.New(t)
	first := signtest.NewKey(t)
	ref, d := sigPush(t, reg, "app:1", regtest.Must(regtest.MultiOSIndex())(t), first.Signer)
	tag := strings.Replace(d, ":", "-", 1) + ".sig"
	reg.SetMiddleware(regtest.NewFaults(regtest.Fault{Kind: regtest.FaultAnswer, Route: regtest.RouteManifestByTag,
		Method: http.MethodPut, Suffix: ".sig", Status: http.StatusBadRequest,
		Body: `{"errors":[{"code":"TAG_INVALID","message":"The image tag '` + tag + `' already exists in the 'app' repository and cannot be overwritten because the repository is immutable."}]}`}).Middleware)
	out, errOut, code := run(t, "sign", ref, "--key", key, "--format", "legacy")
	reg.SetMiddleware(nil)
	if code != ExitError || out != "" || !strings.Contains(errOut, tag) || !strings.Contains(errOut, "immutable") ||
		strings.Contains(errOut, sign.RuleUnsigned) {
		t.Fatalf("sign onto an immutable .sig tag: exit %d, want 2 naming %s and the immutability\n%s%s", code, tag, out, errOut)
	}
	if out, errOut, code := run(t, "verify", ref, "--key", first.PublicPath); code != 0 {
		t.Fatalf("the first signature: exit %d\n%s%s", code, out, errOut)
	}
}

// TestDistSignBundle: on the CNCF distribution registry (no referrers API,
// htpasswd), sign --format bundle stores the bundles under the referrers
// tag fallback; verify --key accepts them; promote to a second registry
// copies them (and the fallback tag) and checks them there.
func TestDistSignBundle(t *testing.T) {
	relWriteEnv(t)
	key, pub := relSignKey(t)
	reg := disttest.New(t, disttest.Options{})
	prod := disttest.New(t, disttest.Options{})
	src := push(t, reg, "ci/app:1", regtest.Must(regtest.MultiOSIndex())(t))
	digest := distHead(t, reg, src)
	if out, errOut, code := run(t, "sign", src, "--key", key, "--recursive", "--format", "bundle"); code != 0 || strings.Count(out, "signed ") != 5 {
		t.Fatalf("sign --format bundle: exit %d\n%s%s", code, out, errOut)
	}
	fallback := reg.Host() + "/ci/app:" + strings.Replace(digest, ":", "-", 1)
	if distHead(t, reg, fallback) == "" || distHead(t, reg, fallback+".sig") != "" {
		t.Fatalf("want the referrers tag fallback %s and no .sig tag", fallback)
	}
	if out, errOut, code := run(t, "verify", src, "--key", pub); code != 0 {
		t.Fatalf("verify --key: exit %d\n%s%s", code, out, errOut)
	}
	to := prod.Host() + "/release/app:1.0"
	if out, errOut, code := run(t, "promote", src, to, "--key", pub); code != 0 {
		t.Fatalf("promote: exit %d\n%s%s", code, out, errOut)
	}
	if distHead(t, prod, prod.Host()+"/release/app:"+strings.Replace(digest, ":", "-", 1)) == "" {
		t.Error("the referrers tag fallback was not promoted")
	}
	if out, errOut, code := run(t, "verify", to, "--key", pub); code != 0 {
		t.Fatalf("verify --key of the promoted index: exit %d\n%s%s", code, out, errOut)
	}
}
