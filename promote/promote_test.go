package promote

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	ociremote "github.com/sigstore/cosign/v2/pkg/oci/remote"

	"github.com/imgctl/imgctl/internal/testing/gatetest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/internal/testing/signtest"
	"github.com/imgctl/imgctl/policy"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/sign"
	"github.com/imgctl/imgctl/verify"
)

func TestPromoteRefuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	reg := regtest.New(t)
	k, other := signtest.NewKey(t), signtest.NewKey(t)
	good := regtest.Must(regtest.MultiOSIndex())(t)
	unsigned := gatetest.PushSigned(t, reg, "ci/unsigned:1", good, nil, false)
	wrongKey := gatetest.PushSigned(t, reg, "ci/other-key:1", good, other.Signer, false)
	signed := gatetest.PushSigned(t, reg, "ci/signed:1", good, k.Signer, false)
	strict := &policy.Policy{RequirePlatforms: []string{"windows/amd64:10.0.17763"}, AllowedBases: []string{"mcr.microsoft.com/windows/*"},
		Rules: policy.Rules{Errors: []string{policy.RuleMissingBaseAnnotation}}}
	for _, tc := range []struct {
		name  string
		src   name.Digest
		p     *policy.Policy
		rules []string
	}{
		{"unsigned", unsigned, nil, []string{sign.RuleUnsigned}},
		{"signed with another key", wrongKey, nil, []string{sign.RuleBadSignature}},
		{"breaks the policy", signed, strict, []string{verify.RuleMissingPlatform, policy.RuleMissingBaseAnnotation}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := tag(t, reg, "release/"+tc.src.Context().RepositoryStr()[3:]+":1.0")
			src := tc.src.Context().Tag("1")
			pr, err := Run(ctx, gate(t, tc.p, k.PublicPath), src, dst, Options{})
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("Promote: %v, want ErrRefused", err)
			}
			if pr.Pushed || pr.Report == nil || pr.Report.Passed || pr.Source.DigestStr() != tc.src.DigestStr() {
				t.Fatalf("promotion %+v", pr)
			}
			for _, r := range tc.rules {
				if !hasError(pr.Report, r) {
					t.Errorf("no %s error in %v", r, pr.Report.Findings)
				}
			}
			if headDigest(t, dst) != nil || headDigest(t, dst.Context().Digest(tc.src.DigestStr())) != nil {
				t.Fatal("a refused promotion wrote to the destination")
			}
		})
	}
}

func hasError(rep *verify.Report, rule string) bool {
	for _, f := range rep.Errors() {
		if f.Rule == rule {
			return true
		}
	}
	return false
}

func TestPromote(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	k := signtest.NewKey(t)
	src := regtest.New(t, regtest.WithReferrers())
	other := regtest.New(t)
	srcRef := gatetest.PushSigned(t, src, "ci/app:1", regtest.Must(regtest.MultiOSIndex())(t), k.Signer, true)
	ms, _ := remote.Index(srcRef)
	im, _ := ms.IndexManifest()
	for _, tc := range []struct {
		name  string
		reg   *regtest.Registry
		mount bool
	}{
		{"same registry", src, true},
		{"other registry", other, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := tag(t, tc.reg, "release/app:1.0")
			g := gate(t, &policy.Policy{Targets: []string{"ltsc2022", "ltsc2025"}}, k.PublicPath)
			tc.reg.ResetStats()
			pr, err := Run(ctx, g, srcRef.Context().Tag("1"), dst, Options{})
			if err != nil {
				t.Fatal(err)
			}
			st := tc.reg.Stats()
			if got := headDigest(t, dst); !pr.Pushed || got == nil || got.String() != srcRef.DigestStr() {
				t.Fatalf("destination points at %v, want %s (pushed %v)", got, srcRef.DigestStr(), pr.Pushed)
			}
			if tc.mount && (st.BlobBytesReceived != 0 || st.Mounts == 0) {
				t.Errorf("same-registry promotion uploaded instead of mounting: %s", st)
			}
			if pr.Signatures.Tags != 9 || pr.Signatures.Referrers != 9 {
				t.Errorf("copied %+v, want 9 signature tags and 9 referrers", pr.Signatures)
			}
			for _, d := range im.Manifests {
				if headDigest(t, dst.Context().Digest(d.Digest.String())) == nil {
					t.Errorf("child %s (%v) missing at the destination", d.Digest, d.Annotations)
				}
			}
			// The destination verifies with the key, as verify --key does.
			again := gate(t, nil, k.PublicPath)
			rep, err := Run(ctx, again, dst, dst, Options{})
			if err != nil || rep.Pushed || !rep.Report.Passed {
				t.Fatalf("verifying the destination: %v %+v", err, rep.Report)
			}
			if refs, err := ociremote.Referrers(dst.Context().Digest(srcRef.DigestStr()), sign.SignatureArtifactType); err != nil || len(refs.Manifests) != 1 {
				t.Errorf("referrers at the destination: %v, %v", refs, err)
			}
			// Promoting the same digest again is a no-op.
			if pr, err := Run(ctx, g, srcRef, dst, Options{}); err != nil || pr.Pushed {
				t.Fatalf("second promotion: %v, pushed %v", err, pr.Pushed)
			}
			// Another index never replaces the tag.
			otherIdx := regtest.Must(regtest.Index(regtest.Entry{Image: regtest.Must(regtest.LinuxImage("amd64", regtest.WithSeed(tc.name)))(t)}))(t)
			o := gatetest.PushSigned(t, src, "ci/app:2", otherIdx, k.Signer, false)
			if _, err := Run(ctx, g, o, dst, Options{}); !errors.Is(err, registry.ErrTagExists) {
				t.Fatalf("promoting another index onto the tag: %v, want ErrTagExists", err)
			}
			if got := headDigest(t, dst); got == nil || got.String() != srcRef.DigestStr() {
				t.Fatalf("the tag moved to %v", got)
			}
		})
	}
}

// TestPromoteSignatureReadError: a registry that fails the signature read
// (500 past the retries on the source's .sig tags) is an error of promote,
// not a refusal of the source, and nothing is written.
func TestPromoteSignatureReadError(t *testing.T) {
	t.Setenv(registry.EnvRetryBase, "1ms")
	ctx := context.Background()
	k := signtest.NewKey(t)
	reg := regtest.New(t)
	srcRef := gatetest.PushSigned(t, reg, "ci/app:1", regtest.Must(regtest.MultiOSIndex())(t), k.Signer, false)
	dst := tag(t, reg, "release/app:1.0")
	reg.SetMiddleware(regtest.NewFaults(regtest.Fault{Kind: regtest.Fault500, Route: regtest.RouteManifestByTag,
		Method: http.MethodGet, Suffix: ".sig"}).Middleware)
	pr, err := Run(ctx, gate(t, nil, k.PublicPath), srcRef, dst, Options{})
	reg.SetMiddleware(nil)
	if err == nil || errors.Is(err, ErrRefused) || !registry.IsRegistryError(err) {
		t.Fatalf("Promote: %v, want a registry error, not %v", err, ErrRefused)
	}
	if pr.Pushed || pr.Report != nil || headDigest(t, dst) != nil {
		t.Fatalf("promotion %+v wrote or judged", pr)
	}
}
