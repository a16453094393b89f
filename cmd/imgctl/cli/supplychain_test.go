package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/internal/testing/disttest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/sign"
	"github.com/imgctl/imgctl/snapshot"
	"github.com/imgctl/imgctl/verify"
)

// chainDoc is a policy that requires, of every image, provenance from
// BuildKit (SLSA v0.2) or imgctl rebase (SLSA v1) and an SBOM, and checks
// the one Windows build of regtest.SupplyChainIndex.
const chainDoc = `targets: [ltsc2025]
supplyChain:
  - platforms: ["*"]
    provenance: true
    builders:
      - buildType: https://mobyproject.org/buildkit@v1
      - builderId: https://github.com/imgctl/imgctl*
        buildType: https://github.com/imgctl/imgctl/rebase/v1
    sbom: true
`

// errorRules returns the error findings of a verify -o json report as
// "rule platform", sorted.
func errorRules(t *testing.T, out string) []string {
	t.Helper()
	var rep verify.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var got []string
	for _, f := range rep.Errors() {
		got = append(got, f.Rule+" "+f.Platform)
	}
	slices.Sort(got)
	return got
}

// TestVerifyPolicySupplyChain: verify --policy reports missing-provenance,
// missing-sbom and untrusted-builder for the images the policy's
// supplyChain covers, and exits 1; a policy the index meets exits 0.
func TestVerifyPolicySupplyChain(t *testing.T) {
	t.Parallel()
	reg := regtest.New(t)
	full := push(t, reg, "app:full", regtest.Must(regtest.SupplyChainIndex(true))(t))
	noSBOM := push(t, reg, "app:nosbom", regtest.Must(regtest.SupplyChainIndex(false))(t))
	bare := push(t, reg, "app:bare", index(t, regtest.Entry{Image: regtest.Must(regtest.LinuxImage("amd64"))(t)},
		regtest.Entry{Image: regtest.Must(regtest.WindowsImage(regtest.OSVersionLTSC2025))(t)}))
	const lin, win = "linux/amd64", "windows/amd64:10.0.26100.6584"
	for _, tc := range []struct {
		name, doc, ref string
		want           []string
	}{
		{"meets the policy", chainDoc, full, nil},
		{"no SBOM", chainDoc, noSBOM, []string{"missing-sbom " + lin, "missing-sbom " + win}},
		{"no SBOM, Linux only covered", strings.Replace(chainDoc, `["*"]`, "[linux/*]", 1), noSBOM, []string{"missing-sbom " + lin}},
		{"no attestations", chainDoc, bare, []string{"missing-provenance " + lin, "missing-provenance " + win, "missing-sbom " + lin, "missing-sbom " + win}},
		{"rebase not trusted", "targets: [ltsc2025]\nsupplyChain: [{platforms: ['*'], provenance: true, builders: [{buildType: https://mobyproject.org/buildkit@v1}]}]\n", full,
			[]string{"untrusted-builder " + win}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(t, "verify", tc.ref, "--policy", writePolicy(t, tc.doc), "-o", "json")
			wantCode := 0
			if len(tc.want) > 0 {
				wantCode = ExitFailed
			}
			if got := errorRules(t, out); code != wantCode || !slices.Equal(got, tc.want) {
				t.Fatalf("exit %d (want %d), errors %v, want %v\n%s", code, wantCode, got, tc.want, errOut)
			}
		})
	}
	if _, errOut, code := run(t, "verify", full, "--policy", writePolicy(t, "supplyChain: [{platforms: ['*'], builders: [{buildType: x}]}]\n")); code != ExitError || !strings.Contains(errOut, "provenance: true") {
		t.Errorf("builders without provenance: exit %d %s", code, errOut)
	}
}

// TestPromoteSupplyChainCLI: promote refuses an index without the
// attestations the policy requires (exit 1, nothing written), and copies
// one with them to another registry, attestation manifests and the
// signatures of every manifest included, where verify --policy passes.
func TestPromoteSupplyChainCLI(t *testing.T) {
	t.Parallel()
	reg, prod := regtest.New(t), regtest.New(t, regtest.WithReferrers())
	sv, pub := sigKey(t)
	doc := chainDoc + "  - {platforms: [windows/*], keys: [" + pub + "]}\nkeys: [" + pub + "]\n"
	pol := writePolicy(t, doc)
	noSBOM, _ := sigPush(t, reg, "ci/nosbom:1", regtest.Must(regtest.SupplyChainIndex(false))(t), sv)
	out, _, code := run(t, "promote", noSBOM, prod.Host()+"/release/nosbom:1", "--policy", pol)
	if code != ExitFailed || !strings.Contains(out, "missing-sbom") || sigHead(t, prod, "release/nosbom:1") != "" {
		t.Fatalf("promote without SBOMs: exit %d, want 1 and nothing written\n%s", code, out)
	}

	src, d := sigPush(t, reg, "ci/app:1", regtest.Must(regtest.SupplyChainIndex(true))(t), sv)
	_, srcIdx := regIndex(t, reg, reg.Host()+"/ci/app@"+d)
	for _, m := range srcIdx.Manifests { // sign --attestations
		if m.Annotations[snapshot.AnnotationReferenceType] != "" {
			if _, err := sign.Sign(context.Background(), reg.MustRef(t, "ci/app@"+m.Digest.String()).(name.Digest), sv, sign.Options{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	dst := prod.Host() + "/release/app:1.0"
	if out, errOut, code := run(t, "promote", src, dst, "--policy", pol); code != 0 || !strings.Contains(out, "promoted") {
		t.Fatalf("promote: exit %d\n%s%s", code, out, errOut)
	}
	if got := sigHead(t, prod, "release/app:1.0"); got != d {
		t.Fatalf("destination digest %s, want %s", got, d)
	}
	_, im := regIndex(t, prod, dst)
	for _, m := range im.Manifests {
		if sigHead(t, prod, "release/app@"+m.Digest.String()) == "" || sigHead(t, prod, "release/app:"+strings.Replace(m.Digest.String(), ":", "-", 1)+".sig") == "" {
			t.Errorf("%s or its signature is not at the destination", m.Digest)
		}
	}
	if out, errOut, code := run(t, "verify", dst, "--policy", pol); code != 0 {
		t.Fatalf("verify --policy at the destination: exit %d\n%s%s", code, out, errOut)
	}
}

// regIndex reads the index s names on reg.
func regIndex(t *testing.T, reg *regtest.Registry, s string) (string, *v1.IndexManifest) {
	t.Helper()
	ii, err := remote.Index(reg.MustRef(t, strings.TrimPrefix(s, reg.Host()+"/")))
	if err != nil {
		t.Fatal(err)
	}
	im, err := ii.IndexManifest()
	return s, must(t, im, err)
}

// TestDistPromoteSupplyChain: the same through the CNCF distribution
// registry (no referrers API, htpasswd), signed with imgctl sign: promote
// to a second distribution registry keeps the attestation manifests and
// the signatures of every manifest, and the policy passes there.
func TestDistPromoteSupplyChain(t *testing.T) {
	relFastRetries(t)
	reg := disttest.New(t, disttest.Options{})
	prod := disttest.New(t, disttest.Options{})
	prefix := filepath.Join(t.TempDir(), "release")
	t.Setenv("COSIGN_PASSWORD", "s3cret")
	if out, errOut, code := run(t, "keygen", "--output-key-prefix", prefix); code != 0 {
		t.Fatalf("keygen: exit %d\n%s%s", code, out, errOut)
	}
	key, pub := prefix+".key", prefix+".pub"
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(pol, []byte(chainDoc+"  - {platforms: [windows/*], keys: ["+pub+"]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := push(t, reg, "ci/app:1", regtest.Must(regtest.SupplyChainIndex(true))(t))
	if out, errOut, code := run(t, "sign", src, "--key", key, "--recursive"); code != 0 {
		t.Fatalf("sign: exit %d\n%s%s", code, out, errOut)
	}
	_, srcIdx := distIndex(t, reg, src)
	for _, m := range srcIdx.Manifests { // sign --attestations
		if m.Annotations[snapshot.AnnotationReferenceType] == "" {
			continue
		}
		if out, errOut, code := run(t, "sign", reg.Host()+"/ci/app@"+m.Digest.String(), "--key", key); code != 0 {
			t.Fatalf("sign: exit %d\n%s%s", code, out, errOut)
		}
	}
	dst := prod.Host() + "/release/app:1.0"
	if out, errOut, code := run(t, "promote", src, dst, "--policy", pol, "--key", pub); code != 0 || !strings.Contains(out, "promoted") {
		t.Fatalf("promote: exit %d\n%s%s", code, out, errOut)
	}
	_, im := distIndex(t, prod, dst)
	for _, m := range im.Manifests {
		if distHead(t, prod, prod.Host()+"/release/app@"+m.Digest.String()) == "" ||
			distHead(t, prod, prod.Host()+"/release/app:"+strings.Replace(m.Digest.String(), ":", "-", 1)+".sig") == "" {
			t.Errorf("%s or its signature is not at the destination", m.Digest)
		}
	}
	if out, errOut, code := run(t, "verify", dst, "--policy", pol, "--key", pub); code != 0 {
		t.Fatalf("verify --policy at the destination: exit %d\n%s%s", code, out, errOut)
	}
	if out, _, code := run(t, "verify", dst, "--policy", writePolicy(t, "targets: [ltsc2025]\nsupplyChain: [{platforms: ['*'], provenance: true, builders: [{builderId: https://ci.example/*}]}]\n"), "-o", "json"); code != ExitFailed ||
		len(errorRules(t, out)) != 2 {
		t.Fatalf("an untrusted builder at the destination: exit %d\n%s", code, out)
	}
}

// TestPromoteImmutableSignatureTagCLI: a destination that holds tags
// immutable refuses to update a signature tag promote merges into; promote
// exits 2 and says why, and never reports the image unsigned.
func TestPromoteImmutableSignatureTagCLI(t *testing.T) {
	t.Parallel()
	reg, prod := regtest.New(t), regtest.New(t, regtest.WithMiddleware(regtest.ImmutableTags))
	sv, pub := sigKey(t)
	sv2, _ := sigKey(t)
	src, d := sigPush(t, reg, "ci/app:1", regtest.Must(regtest.MultiOSIndex())(t), sv)
	dst := prod.Host() + "/release/app:1.0"
	if out, errOut, code := run(t, "promote", src, dst, "--key", pub); code != 0 {
		t.Fatalf("first promotion: exit %d\n%s%s", code, out, errOut)
	}
	srcDigest := reg.MustRef(t, "ci/app@"+d).(name.Digest)
	if _, err := sign.Sign(context.Background(), srcDigest, sv2, sign.Options{Recursive: true}); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, "promote", src, dst, "--key", pub)
	if code != ExitError || !strings.Contains(errOut, "configured as immutable") || !strings.Contains(errOut, "exempt") ||
		strings.Contains(out+errOut, sign.RuleUnsigned) {
		t.Fatalf("promotion onto immutable signature tags: exit %d, want 2 naming the refusal\n%s%s", code, out, errOut)
	}
}

// TestRebasePromoteSupplyChain: imgctl rebase's own provenance passes a
// policy that trusts it (and fails one that trusts only BuildKit), and
// promote of the rebased index to another registry carries the earlier
// attestation manifests the provenance names in the rebase's source
// repository, signatures included, so that the chain resolves there.
func TestRebasePromoteSupplyChain(t *testing.T) {
	t.Parallel()
	reg, prod := regtest.New(t), regtest.New(t)
	sv, pub := sigKey(t)
	app := rebaseFixture(t, reg)
	_, appIdx := regIndex(t, reg, app)
	signAll := func(repo string, im *v1.IndexManifest) {
		for _, m := range im.Manifests {
			if _, err := sign.Sign(context.Background(), reg.MustRef(t, repo+"@"+m.Digest.String()).(name.Digest), sv, sign.Options{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	signAll("app", appIdx)
	moveBases(t, reg, winFeb)
	rebased := reg.Host() + "/rebased/app:2"
	if out, errOut, code := run(t, "rebase", app, "-t", rebased); code != 0 {
		t.Fatalf("rebase: exit %d\n%s%s", code, out, errOut)
	}
	ref, im := regIndex(t, reg, rebased)
	d := regtest.Must(remote.Head(reg.MustRef(t, strings.TrimPrefix(ref, reg.Host()+"/"))))(t).Digest
	if _, err := sign.Sign(context.Background(), reg.MustRef(t, "rebased/app@"+d.String()).(name.Digest), sv, sign.Options{}); err != nil {
		t.Fatal(err)
	}
	signAll("rebased/app", im)

	trustRebase := writePolicy(t, "targets: [ltsc2025]\nkeys: ["+pub+"]\nsupplyChain:\n  - platforms: ['*']\n    provenance: true\n    builders: [{builderId: https://github.com/imgctl/imgctl*, buildType: https://github.com/imgctl/imgctl/rebase/v1}]\n")
	onlyBuildKit := writePolicy(t, "targets: [ltsc2025]\nsupplyChain: [{platforms: ['*'], provenance: true, builders: [{buildType: https://mobyproject.org/buildkit@v1}]}]\n")
	if out, errOut, code := run(t, "verify", rebased, "--policy", trustRebase); code != 0 {
		t.Fatalf("verify of the rebased index: exit %d\n%s%s", code, out, errOut)
	}
	if out, _, code := run(t, "verify", rebased, "--policy", onlyBuildKit, "-o", "json"); code != ExitFailed || len(errorRules(t, out)) != 3 {
		t.Fatalf("the rebased index under a BuildKit-only policy: exit %d, want 3 untrusted-builder errors\n%s", code, out)
	}

	dst := prod.Host() + "/release/app:1.0"
	if out, errOut, code := run(t, "promote", rebased, dst, "--policy", trustRebase); code != 0 {
		t.Fatalf("promote: exit %d\n%s%s", code, out, errOut)
	}
	for _, m := range appIdx.Manifests {
		if m.Annotations[snapshot.AnnotationReferenceType] == "" {
			continue
		}
		if sigHead(t, prod, "release/app@"+m.Digest.String()) == "" || sigHead(t, prod, "release/app:"+strings.Replace(m.Digest.String(), ":", "-", 1)+".sig") == "" {
			t.Errorf("the earlier attestation manifest %s or its signature is not at the destination", m.Digest)
		}
	}
	if out, errOut, code := run(t, "verify", dst, "--policy", trustRebase); code != 0 {
		t.Fatalf("verify at the destination: exit %d\n%s%s", code, out, errOut)
	}
}
