package cli

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/policy"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/sign"
	"github.com/imgctl/imgctl/verify"
)

func sigHead(t *testing.T, reg *regtest.Registry, s string) string {
	t.Helper()
	d, err := remote.Head(reg.MustRef(t, s))
	if err != nil {
		return ""
	}
	return d.Digest.String()
}

func writePolicy(t *testing.T, doc string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPromoteCLI(t *testing.T) {
	t.Parallel()
	reg, prod := regtest.New(t), regtest.New(t)
	sv, pub := sigKey(t)
	good := regtest.Must(regtest.MultiOSIndex())(t)
	unsigned, _ := sigPush(t, reg, "ci/unsigned:1", good, nil)
	signed, d := sigPush(t, reg, "ci/app:1", good, sv)
	strict := writePolicy(t, "requirePlatforms: [windows/amd64:10.0.17763]\nkeys: ["+pub+"]\n")
	host := func(r *regtest.Registry, s string) string { return r.Host() + "/" + s }

	for _, tc := range []struct {
		name  string
		args  []string
		code  int
		msg   string
		dst   string // must be absent after a refusal
		rules []string
	}{
		{"unsigned", []string{"promote", unsigned, host(reg, "release/a:1"), "--key", pub}, 1, "refusing to promote", "release/a:1", []string{sign.RuleUnsigned}},
		{"breaks the policy", []string{"promote", signed, host(reg, "release/b:1"), "--policy", strict}, 1, "refusing", "release/b:1", []string{verify.RuleMissingPlatform}},
		{"no tag", []string{"promote", signed, host(reg, "release/c")}, 2, "explicit tag", "release/c:latest", nil},
		{"bad policy", []string{"promote", signed, host(reg, "release/d:1"), "--policy", writePolicy(t, "tagets: [ltsc2022]\n")}, 2, "tagets", "release/d:1", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(t, append(tc.args, "-o", "json")...)
			if code != tc.code || !strings.Contains(errOut, tc.msg) {
				t.Fatalf("exit %d, want %d with %q\n%s%s", code, tc.code, tc.msg, out, errOut)
			}
			if sigHead(t, reg, tc.dst) != "" || sigHead(t, reg, strings.Split(tc.dst, ":")[0]+"@"+d) != "" {
				t.Fatal("the destination was written")
			}
			if len(tc.rules) > 0 {
				var res struct{ Verify json.RawMessage }
				if err := json.Unmarshal([]byte(out), &res); err != nil {
					t.Fatal(err)
				}
				r := decodeReport(t, string(res.Verify))
				for _, rule := range tc.rules {
					if r.severity(rule) != "error" {
						t.Errorf("no %s error in %s", rule, res.Verify)
					}
				}
			}
		})
	}

	for _, tc := range []struct {
		name string
		reg  *regtest.Registry
	}{{"same registry", reg}, {"other registry", prod}} {
		t.Run(tc.name, func(t *testing.T) {
			dst := host(tc.reg, "release/app:1.0")
			out, errOut, code := run(t, "promote", signed, dst, "--key", pub)
			if code != 0 || !strings.Contains(out, "promoted") {
				t.Fatalf("promote: exit %d\n%s%s", code, out, errOut)
			}
			if got := sigHead(t, tc.reg, "release/app:1.0"); got != d {
				t.Fatalf("destination digest %s, want %s", got, d)
			}
			if out, errOut, code := run(t, "verify", dst, "--key", pub); code != 0 {
				t.Fatalf("verify --key on the destination: exit %d\n%s%s", code, out, errOut)
			}
			if out, _, code := run(t, "promote", signed, dst, "--key", pub); code != 0 || !strings.Contains(out, "already points") {
				t.Fatalf("promoting again: exit %d\n%s", code, out)
			}
			other, _ := sigPush(t, reg, "ci/other:1", index(t, regtest.Entry{Image: regtest.Must(regtest.LinuxImage("arm64"))(t)}), sv)
			if _, errOut, code := run(t, "promote", other, dst, "--key", pub); code != 2 || !strings.Contains(errOut, registry.ErrTagExists.Error()) {
				t.Fatalf("promoting onto an existing tag: exit %d %s", code, errOut)
			}
			if got := sigHead(t, tc.reg, "release/app:1.0"); got != d {
				t.Fatalf("the tag moved to %s", got)
			}
		})
	}
}

// TestVerifyPolicy: a policy file applies with the flags, and bad policies
// are usage errors.
func TestVerifyPolicy(t *testing.T) {
	t.Parallel()
	reg := regtest.New(t)
	ref := push(t, reg, "app:1", regtest.Must(regtest.MultiOSIndex())(t))
	strict := writePolicy(t, "targets: [ltsc2022]\nallowedBases: [mcr.microsoft.com/windows/*]\nrules: {errors: [missing-base-annotation]}\n")
	out, _, code := run(t, "verify", ref, "--policy", strict, "--windows", "ltsc2025", "-o", "json")
	r := decodeReport(t, out)
	if code != 1 || r.severity(policy.RuleMissingBaseAnnotation) != "error" {
		t.Fatalf("strict policy: exit %d\n%s", code, out)
	}
	targets := map[string]bool{}
	for _, tr := range r.Targets {
		targets[tr.Target] = true
	}
	if !targets["ltsc2022"] || !targets["ltsc2025"] {
		t.Fatalf("targets %v, want the policy's and the flag's", targets)
	}
	lenient := writePolicy(t, "allowedBases: [mcr.microsoft.com/windows/*]\nrules: {ignore: [missing-base-annotation]}\n")
	if out, errOut, code := run(t, "verify", ref, "--policy", lenient); code != 0 || strings.Contains(out, "missing-base-annotation") {
		t.Fatalf("lenient policy: exit %d\n%s%s", code, out, errOut)
	}
	for _, doc := range []string{"targets: [ltsc2022]\nunknown: 1\n", "rules: {errors: [nope]}\n", ""} {
		if _, errOut, code := run(t, "verify", ref, "--policy", writePolicy(t, doc)); code != 2 || !strings.Contains(errOut, "invalid policy") {
			t.Errorf("policy %q: exit %d %s", doc, code, errOut)
		}
	}
}

// TestPromoteCopyFailure: when the copy fails after the gate passed,
// promote exits 2 and says nothing of DST on stdout; it used to print
// "DST already points at DIGEST" for a tag it had not written.
func TestPromoteCopyFailure(t *testing.T) {
	relFastRetries(t)
	reg := regtest.New(t)
	src := push(t, reg, "ci/app:1", regtest.Must(regtest.MultiOSIndex())(t))
	f := regtest.NewFaults(regtest.Fault{Kind: regtest.Fault500, Route: regtest.RouteManifest, Method: http.MethodPut, Repo: "release/app"})
	reg.SetMiddleware(f.Middleware)
	dst := reg.Host() + "/release/app:1"
	out, errOut, code := run(t, "promote", src, dst)
	if code != ExitError || f.Injected() == 0 || !strings.Contains(errOut, "500") {
		t.Fatalf("exit %d, %d faults\n%s%s", code, f.Injected(), out, errOut)
	}
	if !strings.Contains(out, "PASSED") || strings.Contains(out, dst) || strings.Contains(out, "promoted") {
		t.Errorf("stdout must hold the gate's report and nothing about %s:\n%s", dst, out)
	}
}
