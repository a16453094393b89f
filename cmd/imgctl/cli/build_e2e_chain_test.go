package cli

import (
	"context"
	"crypto"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/cosign/v2/pkg/cosign"
	"github.com/sigstore/cosign/v3/cmd/cosign/cli/options"
	cosignverify "github.com/sigstore/cosign/v3/cmd/cosign/cli/verify"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/imgctl/imgctl/internal/testing/buildtest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/rebase"
)

// buildKitBuildType is the buildDefinition.buildType of the SLSA v1
// provenance BuildKit v0.34 writes.
const buildKitBuildType = buildtest.BuildKitBuildType

// chainPolicy is a policy for the index examples/hello builds: both LTSC
// targets, and per image provenance from the given builders, and an SBOM
// when sbom is set; keys when given.
func chainPolicy(t *testing.T, sbom bool, keys []string, builders ...string) string {
	t.Helper()
	return writePolicy(t, buildtest.SupplyChainPolicy(sbom, keys, builders...))
}

// supplyChain is the supply chain end to end on a real build: a build of
// every variant with provenance and an SBOM from the local scanner; verify
// reads each attestation back under a policy; sign --format both
// --attestations, which cosign v2's and cosign v3's own verification code
// accept; promote to a second registry (with the referrers API, where the
// first has none) under a policy with keys, which checks it again there;
// then the next Patch Tuesday: bases exits 1, rebase adds its own
// provenance, and the rebased index, signed again, passes a policy that
// trusts imgctl's rebase and is refused by one that requires an SBOM.
// It moves the ltsc2025 base tag, from whatever revision it holds, so it
// runs last.
func (e *e2e) supplyChain(t *testing.T) {
	ctx := context.Background()
	host := e.reg.Host()
	scanner, err := buildtest.PushScanner(host + "/tools/sbom-scanner:1")
	if err != nil {
		t.Fatal(err)
	}
	tag := host + "/hello:chain"
	start := time.Now()
	out, stderr, code := run(t, append([]string{"build", "--builder", e.daemon.Addr, "--progress", "quiet",
		"--sbom=generator=" + scanner, "-t", tag, "--build-arg", "VERSION=e2e"}, append(e.baseArgs, e.hello)...)...)
	if code != 0 {
		t.Fatalf("build: exit %d\n%s\n%s", code, out, tail(stderr, 40))
	}
	t.Logf("build with provenance and SBOM took %s", time.Since(start).Round(time.Millisecond))

	// verify reads each attestation back: BuildKit's provenance and SBOM
	// meet the policy; a policy trusting another builder does not.
	buildkit := buildtest.BuildKitBuilder
	if out, errOut, code := run(t, "verify", tag, "--policy", chainPolicy(t, true, nil, buildkit)); code != 0 {
		t.Fatalf("verify --policy: exit %d\n%s%s", code, out, errOut)
	}
	out, _, code = run(t, "verify", tag, "--policy", chainPolicy(t, true, nil, "builderId: https://ci.example.com/*"), "-o", "json")
	if got := errorRules(t, out); code != ExitFailed || len(got) != 4 || !strings.HasPrefix(got[0], "untrusted-builder ") {
		t.Errorf("verify with another trusted builder: exit %d, errors %v; want 1 and untrusted-builder for the 4 images", code, got)
	}

	// sign in both formats, attestation manifests included.
	t.Setenv("COSIGN_PASSWORD", "s3cret")
	prefix := filepath.Join(t.TempDir(), "release")
	if out, errOut, code := run(t, "keygen", prefix); code != 0 {
		t.Fatalf("keygen: exit %d\n%s%s", code, out, errOut)
	}
	key, pub := prefix+".key", prefix+".pub"
	if out, errOut, code := run(t, "sign", tag, "--key", key, "--attestations"); code != 0 {
		t.Fatalf("sign: exit %d\n%s%s", code, out, errOut)
	}
	digests := e.manifestDigests(t, tag)
	if len(digests) != 9 {
		t.Fatalf("%d manifests, want the index, 4 images and 4 attestation manifests", len(digests))
	}
	repo := e.ref(t, tag).Context()
	checkCosign(ctx, t, repo, digests, pub)

	// promote to a second registry that serves the referrers API.
	prod := regtest.New(t, regtest.WithReferrers())
	release := prod.Host() + "/release/hello:1.0"
	signed := chainPolicy(t, true, []string{pub}, buildkit)
	if out, errOut, code := run(t, "promote", "--policy", signed, tag, release); code != 0 || !strings.Contains(out, "promoted") {
		t.Fatalf("promote: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := run(t, "verify", release, "--policy", signed); code != 0 {
		t.Fatalf("verify at the release: exit %d\n%s%s", code, out, errOut)
	}
	if got := e.manifestDigests(t, release); !slices.Equal(got, digests) {
		t.Errorf("the release holds %v, want %v", got, digests)
	}
	relRef, err := name.ParseReference(release, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	checkCosign(ctx, t, relRef.Context(), digests, pub)

	// The next Patch Tuesday: a new ltsc2025 revision under the same tag,
	// one above the revision it holds (the lifecycle subtest has already
	// moved it once; the same revision again would be the same image).
	base := regtest.Must(remote.Image(e.ref(t, e.bases.Nanoserver2025)))(t)
	if _, err := buildtest.PushNextRevision(e.bases.Nanoserver2025, regtest.Must(base.ConfigFile())(t).OSVersion); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := run(t, "bases", tag); code != ExitFailed {
		t.Errorf("bases after the new revision: exit %d, want 1\n%s%s", code, out, errOut)
	}
	rebased := host + "/hello:chain-rebased"
	out, errOut, code := run(t, "rebase", tag, "-t", rebased)
	if code != 0 || !strings.Contains(out+errOut, "SBOM") {
		t.Fatalf("rebase: exit %d (want 0 and a note on the SBOM)\n%s%s", code, out, errOut)
	}
	atts := e.attestationsAt(t, rebased)
	n := 0
	for p, a := range atts {
		s := a.statement(t, predicateSLSA1)
		if s == nil {
			t.Errorf("%s: no provenance after the rebase", p)
			continue
		}
		var pred struct {
			BuildDefinition struct {
				BuildType string `json:"buildType"`
			} `json:"buildDefinition"`
		}
		if err := json.Unmarshal(s.Predicate, &pred); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(p, buildtest.OSVersionLTSC2025[:len("10.0.26100")]) {
			n++
			if pred.BuildDefinition.BuildType != rebase.BuildType || a.statement(t, predicateSPDX) != nil {
				t.Errorf("%s: build type %q, SBOM kept %v; want imgctl's rebase provenance and no SBOM", p, pred.BuildDefinition.BuildType, a.statement(t, predicateSPDX) != nil)
			}
		} else if pred.BuildDefinition.BuildType != buildKitBuildType || a.statement(t, predicateSPDX) == nil {
			t.Errorf("%s (not rebased): build type %q, SBOM %v; want BuildKit's attestation kept", p, pred.BuildDefinition.BuildType, a.statement(t, predicateSPDX) != nil)
		}
	}
	if n != 1 {
		t.Fatalf("%d rebased ltsc2025 variants, want 1", n)
	}
	if out, errOut, code := run(t, "sign", rebased, "--key", key, "--attestations"); code != 0 {
		t.Fatalf("sign the rebased index: exit %d\n%s%s", code, out, errOut)
	}
	rebaseTrusted := chainPolicy(t, false, []string{pub}, buildkit, buildtest.RebaseBuilder)
	release2 := prod.Host() + "/release/hello:1.1"
	if out, errOut, code := run(t, "promote", "--policy", chainPolicy(t, true, []string{pub}, buildkit, "buildType: "+rebase.BuildType), rebased, release2); code != ExitFailed || !strings.Contains(out, "missing-sbom") {
		t.Errorf("promote of the rebased index under a policy requiring SBOMs: exit %d, want 1 with missing-sbom\n%s%s", code, out, errOut)
	}
	if out, errOut, code := run(t, "promote", "--policy", rebaseTrusted, rebased, release2); code != 0 {
		t.Fatalf("promote of the rebased index: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := run(t, "verify", release2, "--policy", rebaseTrusted); code != 0 {
		t.Fatalf("verify the rebased release: exit %d\n%s%s", code, out, errOut)
	}
}

// manifestDigests returns the digest of the index at ref and of each of
// its children, in index order.
func (e *e2e) manifestDigests(t *testing.T, ref string) []string {
	t.Helper()
	ii, im := e.indexAt(t, ref)
	d := regtest.Must(ii.Digest())(t)
	out := []string{d.String()}
	for _, m := range im.Manifests {
		out = append(out, m.Digest.String())
	}
	return out
}

// checkCosign verifies the signature of every digest in repo with cosign
// v2's verification code (the legacy .sig tag) and cosign v3's verify
// command (the bundle, offline with the key, the tlog check skipped).
func checkCosign(ctx context.Context, t *testing.T, repo name.Repository, digests []string, pub string) {
	t.Helper()
	pem, err := os.ReadFile(pub)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := cryptoutils.UnmarshalPEMToPublicKey(pem)
	if err != nil {
		t.Fatal(err)
	}
	sv, err := signature.LoadVerifier(pk, crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	co := &cosign.CheckOpts{SigVerifier: sv, ClaimVerifier: cosign.SimpleClaimVerifier, IgnoreTlog: true, IgnoreSCT: true}
	for _, d := range digests {
		ref := repo.Digest(d)
		if sigs, _, err := cosign.VerifyImageSignatures(ctx, ref, co); err != nil || len(sigs) != 1 {
			t.Errorf("cosign v2 verify %s: %d signatures, %v", ref, len(sigs), err)
		}
		v3 := &cosignverify.VerifyCommand{RegistryOptions: options.RegistryOptions{AllowHTTPRegistry: true},
			KeyRef: pub, IgnoreTlog: true, CheckClaims: true, NewBundleFormat: true, HashAlgorithm: crypto.SHA256}
		if err := v3.Exec(ctx, []string{ref.String()}); err != nil {
			t.Errorf("cosign v3 verify %s: %v", ref, err)
		}
	}
}
