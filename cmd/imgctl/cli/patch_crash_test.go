package cli

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/fleet"
	"github.com/imgctl/imgctl/internal/testing/buildtest"
	"github.com/imgctl/imgctl/internal/testing/disttest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// TestDistPatchCrash kills imgctl patch with SIGKILL at random moments
// (seeded, so a failure can be replayed) while it patches the fleet on the
// distribution registry, and reruns it each time, then once to the end.
// Afterwards every stale image has exactly one new release tag, at the
// digest a dry run planned before the first kill, verified and signed; no
// tag of any repository points at a missing child; and no source is
// promoted twice. It counts the bad outcomes and the duplicate promotions
// and wants both 0.
func TestDistPatchCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("builds imgctl and runs the distribution registry: make test-e2e")
	}
	relFastRetries(t)
	bin := buildtest.ImgctlBinary(t)
	reg := disttest.New(t, disttest.Options{})
	host := reg.Host()
	cases, list := fleetFixture(t, reg)
	key, pub := fleetKeys(t)
	pol := fleetPolicy(t, host)
	args := []string{"patch", "-f", list, "--key", key, "--policy", pol, "--jobs", "4", "-o", "json"}

	// The dry run reads what the real run reads: its time is the
	// yardstick of the kills' delays, so that they land while the real
	// run works, on a fast machine or a loaded one. It is the same binary
	// as the real runs: the rebase records imgctl's version in its
	// provenance, and the test binary's ("(devel)") is not the one go
	// build stamps, so an in-process dry run plans other digests.
	start := time.Now()
	out, errOut, code := runBinary(t, bin, append(args, "--dry-run")...)
	yardstick := time.Since(start)
	if code != 0 { // a dry run runs no gate: nothing can fail a check
		t.Fatalf("patch --dry-run: exit %d\n%s%s", code, out, errOut)
	}
	planned := decodePatch(t, out).byRef()

	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("IMGCTL_CRASH_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		seed = must(t, v, err)
	}
	rng := rand.New(rand.NewPCG(seed, 39))
	t.Logf("seed %d (IMGCTL_CRASH_SEED replays it)", seed)
	kills := 0
	for i := range 8 {
		delay := 50*time.Millisecond + time.Duration(rng.Int64N(int64(yardstick*3/2)+1))
		killed, stdout, stderr := runKilled(t, bin, args, delay)
		if killed {
			kills++
		}
		t.Logf("run %d: killed after %s: %v (%d bytes of report)", i, delay, killed, len(stdout))
		if !killed && !strings.Contains(stdout, `"summary"`) {
			t.Fatalf("run %d ended without a report:\n%s%s", i, stdout, stderr)
		}
		if !killed {
			break // the fleet is done: later kills would find nothing to interrupt
		}
	}
	if kills == 0 {
		t.Fatalf("no run was killed (the first ended within its delay): the test proves nothing (seed %d)", seed)
	}
	out, errOut, code = runBinary(t, bin, args...)
	if code != 0 && code != ExitFailed {
		t.Fatalf("the last run: exit %d\n%s%s", code, out, errOut)
	}
	final := decodePatch(t, out).byRef()

	bad, dup := 0, 0
	for _, c := range cases {
		ref := host + "/" + c.repo + ":" + c.tag
		im, plan := final[ref], planned[ref]
		switch c.want {
		case fleet.Promoted, fleet.Failed:
		default:
			if im.Outcome != fleet.Current {
				bad++
				t.Errorf("%s: %s, want current", ref, im.Outcome)
			}
			continue
		}
		if c.failure == fleet.FailureCheck {
			if im.Outcome != fleet.Failed || im.Failure != fleet.FailureCheck {
				bad++
				t.Errorf("%s: %s/%s, want a failed check", ref, im.Outcome, im.Failure)
			}
			continue
		}
		promotions := promotionsOf(t, reg, c.repo, im.Digest)
		if len(promotions) > 1 {
			dup += len(promotions) - 1
			t.Errorf("%s promoted %d times: %v", ref, len(promotions), promotions)
		}
		want := host + "/" + c.repo + ":" + c.newTag
		if im.Outcome != fleet.Promoted || im.Tag != want || im.NewDigest != plan.NewDigest || len(promotions) != 1 || promotions[0] != c.newTag {
			bad++
			t.Errorf("%s: %s to %s@%s (promotions %v); the dry run planned %s@%s", ref, im.Outcome, im.Tag, im.NewDigest, promotions, plan.Tag, plan.NewDigest)
			continue
		}
		if out, errOut, code := run(t, "verify", want, "--key", pub, "--policy", pol); code != 0 {
			bad++
			t.Errorf("verify --key --policy %s: exit %d\n%s%s", want, code, out, errOut)
		}
	}
	bad += danglingTags(t, reg, cases)
	t.Logf("%d kills, %d bad outcomes, %d duplicate promotions", kills, bad, dup)
	if bad != 0 || dup != 0 {
		t.Errorf("%d bad outcomes and %d duplicate promotions, want 0 and 0 (seed %d)", bad, dup, seed)
	}
}

// runKilled runs imgctl and kills it with SIGKILL after delay, unless it
// ended first; it reports whether it was killed.
func runKilled(t *testing.T, bin string, args []string, delay time.Duration) (bool, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		return false, stdout.String(), stderr.String()
	case <-time.After(delay):
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-done
		return true, stdout.String(), stderr.String()
	}
}

// promotionsOf lists the release tags of repo (not the staging or cosign
// tags) whose index names src as the source it was patched from.
func promotionsOf(t *testing.T, reg *disttest.Registry, repo, src string) []string {
	t.Helper()
	r := regtest.Must(name.NewRepository(reg.Host()+"/"+repo, name.Insecure))(t)
	var out []string
	for _, tag := range regtest.Must(remote.List(r, reg.Remote()...))(t) {
		if strings.HasPrefix(tag, fleet.StagePrefix) || strings.HasPrefix(tag, "sha256-") {
			continue
		}
		im := readIndex(t, reg, r.Tag(tag))
		if im != nil && im.Annotations[fleet.AnnotationSource] == src {
			out = append(out, tag)
		}
	}
	return out
}

// readIndex reads the index ref names, nil when it is not an index.
func readIndex(t *testing.T, reg *disttest.Registry, ref name.Reference) *v1.IndexManifest {
	t.Helper()
	d := regtest.Must(remote.Get(ref, reg.Remote()...))(t)
	if !d.MediaType.IsIndex() {
		return nil
	}
	return regtest.Must(v1.ParseIndexManifest(bytes.NewReader(d.Manifest)))(t)
}

// danglingTags counts the tags of the fleet's repositories (release,
// staging and cosign tags) whose index names a child the repository does
// not hold.
func danglingTags(t *testing.T, reg *disttest.Registry, cases []fleetCase) int {
	t.Helper()
	n := 0
	for _, c := range cases {
		r := regtest.Must(name.NewRepository(reg.Host()+"/"+c.repo, name.Insecure))(t)
		for _, tag := range regtest.Must(remote.List(r, reg.Remote()...))(t) {
			im := readIndex(t, reg, r.Tag(tag))
			if im == nil {
				continue
			}
			for _, m := range im.Manifests {
				if _, err := remote.Head(r.Digest(m.Digest.String()), reg.Remote()...); err != nil {
					n++
					t.Errorf("%s:%s names %s, which %s does not hold: %v", r, tag, m.Digest, r, err)
				}
			}
		}
	}
	return n
}

// runBinary runs the built imgctl with args and the test's environment,
// and returns its stdout, stderr and exit code.
func runBinary(t *testing.T, bin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return o.String(), e.String(), ee.ExitCode()
	}
	if err != nil {
		t.Fatalf("%s %s: %v", bin, strings.Join(args, " "), err)
	}
	return o.String(), e.String(), 0
}
