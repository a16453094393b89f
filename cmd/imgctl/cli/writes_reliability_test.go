package cli

import (
	"errors"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/sign"
	"github.com/imgctl/imgctl/snapshot"
)

// The fault × command table of faults_reliability_test.go, for the commands
// that need their own fixtures: bases and rebase (rebaseFixture), promote
// (an index signed with an in-memory key) and sign (an encrypted cosign key,
// as keygen writes it).

// relWriteCmd is one command on its fixture. args gives its arguments for a
// run ("base", "faulted"...) that names a fresh target; result, read with
// no fault middleware installed, must not change under transient faults.
type relWriteCmd struct {
	args   func(run string) []string
	result func(t *testing.T, run, stdout string) string
	// tag is the target tag of a run, which a failed run must not create
	// (nil for commands without one).
	tag func(run string) string
	// want, when set, is the expected result, known without a baseline run.
	want string
}

type relWriteCase struct {
	name  string
	write bool
	setup func(t *testing.T, reg *regtest.Registry) relWriteCmd
}

const relSignPassword = "rel-s3cret"

var (
	relKeyOnce sync.Once
	relKeyPair *sign.KeyPair
	relKeyErr  error
)

// relWriteEnv sets what every test of this file needs, in the top-level
// test so that its subtests may run in parallel: fast retries, and the
// password of relSignKey's key.
func relWriteEnv(t *testing.T) {
	relFastRetries(t)
	t.Setenv("COSIGN_PASSWORD", relSignPassword)
}

// relSignKey writes one encrypted cosign key pair, made once for the whole
// package, into a temporary directory (its password is set by
// relWriteEnv); it returns the private and public key paths. Decrypting it
// (scrypt) is what makes sign slow.
func relSignKey(t *testing.T) (string, string) {
	t.Helper()
	relKeyOnce.Do(func() { relKeyPair, relKeyErr = sign.GenerateKeyPair([]byte(relSignPassword)) })
	if relKeyErr != nil {
		t.Fatal(relKeyErr)
	}
	dir := t.TempDir()
	key, pub := filepath.Join(dir, "cosign.key"), filepath.Join(dir, "cosign.pub")
	if err := sign.WriteKeyPair(relKeyPair, key, pub); err != nil {
		t.Fatal(err)
	}
	return key, pub
}

// relIndexDigests returns the sorted digests of idx and of every manifest
// it lists: what sign --attestations signs.
func relIndexDigests(t *testing.T, idx v1.ImageIndex) string {
	t.Helper()
	d, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	s := d.String()
	for _, c := range m.Manifests {
		s += " " + c.Digest.String()
	}
	return relDigests(s)
}

var relDigestRe = regexp.MustCompile(`sha256:[0-9a-f]{64}`)

// relDigests returns the sorted digests s mentions, so that outputs naming
// other repositories compare equal.
func relDigests(s string) string {
	ds := relDigestRe.FindAllString(s, -1)
	slices.Sort(ds)
	return strings.Join(ds, ",")
}

// relVerifyKey runs verify --key on ref and fails the test unless it passes.
func relVerifyKey(t *testing.T, ref, pub string) {
	t.Helper()
	if out, errOut, code := run(t, "verify", ref, "--key", pub); code != 0 {
		t.Errorf("verify --key %s: exit %d\n%s%s", ref, code, out, errOut)
	}
}

func relWriteCases() []relWriteCase {
	return []relWriteCase{
		{name: "bases", setup: func(t *testing.T, reg *regtest.Registry) relWriteCmd {
			app := rebaseFixture(t, reg)
			return relWriteCmd{
				args:   func(string) []string { return []string{"bases", app, "-o", "json"} },
				result: func(_ *testing.T, _, out string) string { return out },
			}
		}},
		{name: "rebase", write: true, setup: func(t *testing.T, reg *regtest.Registry) relWriteCmd {
			app := rebaseFixture(t, reg)
			moveBases(t, reg, winFeb)
			return relWriteCmd{
				args: func(run string) []string { return []string{"rebase", app, "-t", reg.Host() + "/" + run + "/app:2"} },
				// The result is the rebased images and the subjects of the
				// attestations: the index digest differs between runs, as
				// each run's provenance names its own tag.
				result: func(t *testing.T, run, out string) string {
					d, _, _ := strings.Cut(out, "\n")
					if got := sigHead(t, reg, run+"/app:2"); got != d {
						t.Errorf("%s/app:2 is at %q, rebase printed %q", run, got, d)
					}
					return relRebased(t, reg, run+"/app:2")
				},
				tag: func(run string) string { return run + "/app:2" },
			}
		}},
		{name: "promote", write: true, setup: func(t *testing.T, reg *regtest.Registry) relWriteCmd {
			sv, pub := sigKey(t)
			src, _ := sigPush(t, reg, "ci/app:1", regtest.Must(regtest.MultiOSIndex())(t), sv)
			dst := func(run string) string { return reg.Host() + "/" + run + "/app:1" }
			return relWriteCmd{
				args: func(run string) []string { return []string{"promote", src, dst(run), "--key", pub} },
				// promote tags DST only once the signatures verify there;
				// the result is the digest it tagged and the signatures it
				// copied.
				result: func(t *testing.T, run, out string) string {
					_, copied, _ := strings.Cut(out, "promoted ")
					_, copied, _ = strings.Cut(copied, " (")
					return sigHead(t, reg, run+"/app:1") + " (" + copied
				},
				tag: func(run string) string { return run + "/app:1" },
			}
		}},
		{name: "sign", write: true, setup: func(t *testing.T, reg *regtest.Registry) relWriteCmd {
			key, pub := relSignKey(t)
			idx := regtest.Must(regtest.MultiOSIndex())(t)
			for _, run := range []string{"base", "faulted"} {
				push(t, reg, run+"/app:1", idx)
			}
			ref := func(run string) string { return reg.Host() + "/" + run + "/app:1" }
			return relWriteCmd{
				want: relIndexDigests(t, idx),
				args: func(run string) []string { return []string{"sign", ref(run), "--key", key, "--attestations"} },
				result: func(t *testing.T, run, out string) string {
					relVerifyKey(t, ref(run), pub)
					return relDigests(out)
				},
			}
		}},
	}
}

// relRebased describes the index at tag for comparison across runs: its
// images, and for each attestation the image it is about.
func relRebased(t *testing.T, reg *regtest.Registry, tag string) string {
	t.Helper()
	idx, err := remote.Index(reg.MustRef(t, tag))
	if err != nil {
		t.Fatalf("reading %s: %v", tag, err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatalf("reading %s: %v", tag, err)
	}
	var images, subjects []string
	for _, d := range im.Manifests {
		if snapshot.IsAttestation(d) {
			subjects = append(subjects, d.Annotations[snapshot.AnnotationReferenceDigest])
		} else {
			images = append(images, d.Digest.String())
		}
	}
	return "images " + strings.Join(images, ",") + " attestations of " + strings.Join(subjects, ",")
}

func relWriteCaseNamed(name string) relWriteCase {
	for _, c := range relWriteCases() {
		if c.name == name {
			return c
		}
	}
	panic("no command " + name)
}

// TestFaultsWritesTransient: bases, rebase, promote and sign complete with
// the same result when the registry fails the first requests of each kind.
func TestFaultsWritesTransient(t *testing.T) {
	relWriteEnv(t)
	for _, k := range regtest.FaultKinds {
		for _, c := range relWriteCases() {
			t.Run(string(k)+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				reg := regtest.New(t)
				cmd := c.setup(t, reg)
				want := cmd.want
				if want == "" {
					out, errOut, code := run(t, cmd.args("base")...)
					if code != 0 {
						t.Fatalf("baseline: exit %d\n%s%s", code, out, errOut)
					}
					want = cmd.result(t, "base", out)
				}
				f := regtest.NewFaults(relTransientFaults(k, c.write)...)
				reg.SetMiddleware(f.Middleware)
				out, errOut, code := run(t, cmd.args("faulted")...)
				reg.SetMiddleware(nil)
				got := ""
				if code == 0 {
					got = cmd.result(t, "faulted", out)
				}
				survived := code == 0 && got == want && f.Injected() > 0 && !t.Failed()
				regtest.LogFault(t, string(k), c.name, f.Injected(), survived)
				if !survived {
					t.Errorf("exit %d, %d faults injected\ngot  %s\nwant %s\n%s%s", code, f.Injected(), got, want, out, errOut)
				}
			})
		}
	}
}

// TestFaultsWritesPersistent: when every manifest read fails, bases,
// rebase, promote and sign exit 2 with a message naming the failure, print
// no result and create no tag; a slow registry is not a failure.
func TestFaultsWritesPersistent(t *testing.T) {
	relWriteEnv(t)
	for _, k := range regtest.FaultKinds {
		for _, c := range relWriteCases() {
			t.Run(string(k)+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				reg := regtest.New(t)
				cmd := c.setup(t, reg)
				f := regtest.NewFaults(regtest.Fault{Kind: k, Route: regtest.RouteManifest, Method: http.MethodGet, Delay: 5e6})
				reg.SetMiddleware(f.Middleware)
				out, errOut, code := run(t, cmd.args("faulted")...)
				reg.SetMiddleware(nil)
				var survived bool
				if k == regtest.FaultSlow {
					survived = code == 0
				} else {
					survived = code == ExitError && out == "" && strings.HasPrefix(errOut, "imgctl: ") &&
						relContainsAny(errOut, relFaultMessage[k])
				}
				if cmd.tag != nil {
					survived = survived && relTagAbsent(t, reg, cmd.tag("faulted")) == (k != regtest.FaultSlow)
				}
				regtest.LogFault(t, string(k)+"-persistent", c.name, f.Injected(), survived)
				if !survived || f.Injected() == 0 {
					t.Errorf("exit %d, %d faults\nstdout %q\nstderr %s", code, f.Injected(), out, errOut)
				}
			})
		}
	}
}

// TestFaultsWritesHalfway: rebase and promote whose manifest PUTs start
// failing after the first one tag nothing; once the fault clears a re-run
// publishes the same digest.
func TestFaultsWritesHalfway(t *testing.T) {
	relWriteEnv(t)
	for _, k := range []regtest.FaultKind{regtest.Fault500, regtest.Fault503, regtest.FaultReset} {
		for _, name := range []string{"rebase", "promote"} {
			t.Run(string(k)+"/"+name, func(t *testing.T) {
				t.Parallel()
				reg := regtest.New(t)
				cmd := relWriteCaseNamed(name).setup(t, reg)
				out, errOut, code := run(t, cmd.args("base")...)
				if code != 0 {
					t.Fatalf("baseline: exit %d\n%s%s", code, out, errOut)
				}
				want := cmd.result(t, "base", out)
				f := regtest.NewFaults(regtest.Fault{Kind: k, Route: regtest.RouteManifest, Method: http.MethodPut, After: 1})
				reg.SetMiddleware(f.Middleware)
				_, errOut, code = run(t, cmd.args("faulted")...)
				reg.SetMiddleware(nil)
				absent := relTagAbsent(t, reg, cmd.tag("faulted"))
				out, errOut2, code2 := run(t, cmd.args("faulted")...)
				got := ""
				if code2 == 0 {
					got = cmd.result(t, "faulted", out)
				}
				survived := code == ExitError && absent && code2 == 0 && got == want && !t.Failed()
				regtest.LogFault(t, string(k)+"-halfway", name, f.Injected(), survived)
				if !survived {
					t.Errorf("faulted: exit %d, tag absent %t: %s\nre-run: exit %d %s %s", code, absent, errOut, code2, out, errOut2)
				}
			})
		}
	}
}

// relSigCounts returns, for each digest, how many signatures its cosign
// .sig tag in repo holds (0 when there is no tag), read without faults.
func relSigCounts(t *testing.T, reg *regtest.Registry, repo name.Repository, digests []string) []int {
	t.Helper()
	n := make([]int, len(digests))
	for i, d := range digests {
		h, err := v1.NewHash(d)
		if err != nil {
			t.Fatal(err)
		}
		img, err := remote.Image(registry.SignatureTag(repo, h, "sig"))
		if relNotFound(err) {
			continue
		}
		if err != nil {
			t.Fatalf("reading the .sig tag of %s: %v", d, err)
		}
		m, err := img.Manifest()
		if err != nil {
			t.Fatalf("reading the .sig tag of %s: %v", d, err)
		}
		for _, l := range m.Layers {
			// Every layer the .sig manifest names must be there.
			resp, err := http.Head(reg.URL() + "/v2/" + repo.RepositoryStr() + "/blobs/" + l.Digest.String())
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("signature layer %s of %s: %s", l.Digest, d, resp.Status)
			}
		}
		n[i] = len(m.Layers)
	}
	return n
}

// TestFaultsSignHalfway: sign --attestations whose signature writes start
// failing after the first one exits 2; the one .sig tag it left holds one
// whole signature that verifies (verify --key --signed all finds the rest unsigned and
// exits 1), and the re-run after
// the fault signs every digest once more without duplicating a signature,
// after which verify --key passes.
func TestFaultsSignHalfway(t *testing.T) {
	relWriteEnv(t)
	for _, k := range []regtest.FaultKind{regtest.Fault503, regtest.FaultReset} {
		t.Run(string(k), func(t *testing.T) {
			t.Parallel()
			reg := regtest.New(t)
			key, pub := relSignKey(t)
			idx := regtest.Must(regtest.MultiOSIndex())(t)
			ref, _ := sigPush(t, reg, "app:1", idx, nil)
			repo := reg.MustRef(t, "app:1").Context()
			f := regtest.NewFaults(regtest.Fault{Kind: k, Route: regtest.RouteManifest, Method: http.MethodPut, After: 1})
			reg.SetMiddleware(f.Middleware)
			out, errOut, code := run(t, "sign", ref, "--key", key, "--attestations")
			reg.SetMiddleware(nil)

			all := relIndexDigests(t, idx)
			digests := strings.Split(all, ",")
			counts := relSigCounts(t, reg, repo, digests)
			signed := 0
			for _, c := range counts {
				if c > 1 {
					t.Errorf("a .sig tag holds %d signatures after one run: %v", c, counts)
				}
				signed += c
			}
			// The signatures that were written verify: verify --key finds
			// only unsigned manifests, never a bad signature.
			vout, _, vcode := run(t, "verify", ref, "--key", pub, "--signed", "all", "-o", "json")
			r := decodeReport(t, vout)
			// The fault lets exactly one manifest PUT through: one .sig tag.
			partialOK := vcode == 1 && r.severity(sign.RuleBadSignature) == "" && r.severity(sign.RuleUnsigned) == "error" &&
				signed == 1
			if !partialOK {
				t.Errorf("after the faulted run (%d of %d signed): verify --key exit %d\n%s", signed, len(digests), vcode, vout)
			}

			t.Logf("after the faulted run (exit %d): signatures per digest %v; verify --key exit %d", code, counts, vcode)
			out2, errOut2, code2 := run(t, "sign", ref, "--key", key, "--attestations")
			after := relSigCounts(t, reg, repo, digests)
			once := !slices.ContainsFunc(after, func(c int) bool { return c != 1 })
			vout2, _, vcode2 := run(t, "verify", ref, "--key", pub, "--signed", "all")
			survived := code == ExitError && strings.HasPrefix(errOut, "imgctl: ") && partialOK &&
				code2 == 0 && relDigests(out2) == all && once && vcode2 == 0 && !t.Failed()
			regtest.LogFault(t, string(k)+"-halfway", "sign", f.Injected(), survived)
			if !survived {
				t.Errorf("faulted: exit %d %s%s\nre-run: exit %d %s%s\nsignatures per digest %v (before the re-run %v)\nverify after: exit %d\n%s",
					code, out, errOut, code2, out2, errOut2, after, counts, vcode2, vout2)
			}
		})
	}
}

// TestFaultsVerifyKey: signature checks fail closed. With every fetch of
// a cosign .sig tag failing, verify --key exits 1 or 2 and never passes;
// when only the first fetches fail it passes after retrying.
func TestFaultsVerifyKey(t *testing.T) {
	relWriteEnv(t)
	for _, persistent := range []bool{false, true} {
		for _, k := range regtest.FaultKinds {
			fault, first := string(k), 2
			if persistent {
				fault, first = fault+"-persistent", 0
			}
			t.Run(fault, func(t *testing.T) {
				t.Parallel()
				reg := regtest.New(t)
				sv, pub := sigKey(t)
				ref, _ := sigPush(t, reg, "app:1", regtest.Must(regtest.MultiOSIndex())(t), sv)
				f := regtest.NewFaults(regtest.Fault{Kind: k, Route: regtest.RouteManifest, Method: http.MethodGet,
					Suffix: ".sig", First: first, Delay: 5e6})
				reg.SetMiddleware(f.Middleware)
				out, errOut, code := run(t, "verify", ref, "--key", pub)
				var survived bool
				if persistent && k != regtest.FaultSlow {
					survived = (code == ExitFailed || code == ExitError) && !strings.Contains(out, "PASSED")
				} else {
					survived = code == 0 && strings.Contains(out, "PASSED")
				}
				t.Logf("verify --key: exit %d", code)
				regtest.LogFault(t, fault, "verify-key", f.Injected(), survived)
				if !survived || f.Injected() == 0 {
					t.Errorf("exit %d, %d faults\n%s%s", code, f.Injected(), out, errOut)
				}
			})
		}
	}
}

// relNotFound reports whether err is the registry's 404.
func relNotFound(err error) bool {
	var te *transport.Error
	return errors.As(err, &te) && te.StatusCode == http.StatusNotFound
}
