package story

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/imgctl/imgctl/internal/testing/buildtest"
)

// build is step 1: every platform in one imgctl build, with provenance.
func (s *story) build() error {
	s.step("1. build examples/hello: linux/amd64, linux/arm64, windows/amd64 ltsc2022 and ltsc2025, with SLSA provenance")
	progress := s.progress
	if progress == "" {
		progress = "quiet"
	}
	if err := s.expect(exitOK, "build", "--builder", s.builder, "--progress", progress,
		"--windows", "ltsc2022,ltsc2025",
		"--windows-base", "ltsc2022="+s.bases.Nanoserver2022+",ltsc2025="+s.bases.Nanoserver2025,
		"--build-arg", "GOLANG_IMAGE="+s.bases.Golang, "--build-arg", "LINUX_BASE="+s.bases.Distroless,
		"--build-arg", "VERSION="+s.version, "--provenance", "mode=min",
		"-t", s.ci, "--metadata-file", filepath.Join(s.tmp, "metadata.json"), filepath.Join(s.root, "examples", "hello")); err != nil {
		return err
	}
	var err error
	if s.out.Built, err = s.inspect(s.ci); err != nil {
		return err
	}
	c := newChanges(s.w)
	c.state(State{}, s.out.Built)
	return c.flush()
}

// sign is step 2: a key pair, and signatures of the index, its images and
// their attestation manifests.
func (s *story) sign() error {
	s.step("2. sign: a cosign key pair, then the index, its images and their attestations")
	prefix := filepath.Join(s.tmp, "release")
	s.key, s.pub = prefix+".key", prefix+".pub"
	if err := s.expect(exitOK, "keygen", prefix); err != nil {
		return err
	}
	return s.expect(exitOK, "sign", s.ci, "--key", s.key, "--attestations")
}

// promote is step 3: the policy gate, and a copy of exactly that digest
// to the release registry.
func (s *story) promote() error {
	s.step("3. promote to the release registry under a policy: BuildKit or imgctl rebase provenance, signed by the key")
	s.policy = filepath.Join(s.tmp, "policy.yaml")
	doc := buildtest.SupplyChainPolicy(false, []string{s.pub}, buildtest.BuildKitBuilder, buildtest.RebaseBuilder)
	if err := os.WriteFile(s.policy, []byte(doc), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(s.w, "policy.yaml:\n%s", s.display.Replace(doc))
	if err := s.expect(exitOK, "promote", "--policy", s.policy, s.ci, s.releases[0]); err != nil {
		return err
	}
	var err error
	if s.out.Release, err = s.inspect(s.releases[0]); err != nil {
		return err
	}
	c := newChanges(s.w)
	c.row(s.releases[0], Variant{}, Variant{Digest: s.out.Release.Digest})
	return c.flush()
}

// patchTuesday is step 4: a new revision of the ltsc2025 base under the
// tag the image was built from.
func (s *story) patchTuesday() error {
	s.step("4. Patch Tuesday: a new nanoserver ltsc2025 revision is pushed to %s", s.bases.Nanoserver2025)
	var err error
	if s.out.BaseBefore, err = s.resolve(s.bases.Nanoserver2025, "ltsc2025"); err != nil {
		return err
	}
	if err := s.tagRevisions(); err != nil {
		return err
	}
	fmt.Fprintf(s.w, "\nthe patch level before Patch Tuesday, on %s:", patchReportDate)
	if err := s.expect(exitOK, "bases", s.ci, "--at", patchReportDate); err != nil {
		return err
	}
	if _, err := buildtest.PushPatchTuesday(s.bases.Nanoserver2025, s.out.BaseBefore.OSVersion, patchRevisionCreated); err != nil {
		return err
	}
	if s.out.BaseAfter, err = s.resolve(s.bases.Nanoserver2025, "ltsc2025"); err != nil {
		return err
	}
	c := newChanges(s.w)
	c.row(s.display.Replace(s.bases.Nanoserver2025), s.out.BaseBefore, s.out.BaseAfter)
	return c.flush()
}

// The demo's Patch Tuesday: the seeded bases were created on
// regtest.FixtureTime (2025-01-01); the new ltsc2025 revision is built on
// 2025-02-06, 5 days before February's Patch Tuesday (02-11), and the
// patch level is reported on 2025-02-20, the fix then 14 days old.
var patchRevisionCreated = time.Date(2025, time.February, 6, 18, 0, 0, 0, time.UTC)

const patchReportDate = "2025-02-20"

// tagRevisions gives both Windows bases their revision tags
// (10.0.BUILD.REV), as MCR does, so that imgctl bases can tell the
// variants' patch level.
func (s *story) tagRevisions() error {
	for _, b := range []struct{ ref, release string }{{s.bases.Nanoserver2022, "ltsc2022"}, {s.bases.Nanoserver2025, "ltsc2025"}} {
		v, err := s.resolve(b.ref, b.release)
		if err != nil {
			return err
		}
		if err := buildtest.TagRevision(b.ref, v.OSVersion); err != nil {
			return err
		}
	}
	return nil
}

// stale is step 5: imgctl bases finds the ltsc2025 variant stale.
func (s *story) stale() error {
	s.step("5. imgctl bases: the ltsc2025 variant is stale (exit 1), one Patch Tuesday behind")
	s.out.BasesBefore = s.imgctl("bases", s.ci, "--at", patchReportDate)
	if s.out.BasesBefore != exitFindings {
		return fmt.Errorf("imgctl bases exited %d before the rebase, want %d", s.out.BasesBefore, exitFindings)
	}
	return nil
}

// rebase is step 6: the stale variant onto the new base, no rebuild.
func (s *story) rebase() error {
	s.step("6. imgctl rebase: the stale variant moves onto the new base, without a rebuild")
	if err := s.expect(exitOK, "rebase", s.ci, "-t", s.rebased); err != nil {
		return err
	}
	var err error
	if s.out.Rebased, err = s.inspect(s.rebased); err != nil {
		return err
	}
	c := newChanges(s.w)
	c.state(s.out.Built, s.out.Rebased)
	if err := c.flush(); err != nil {
		return err
	}
	s.out.BasesAfter = s.imgctl("bases", s.rebased, "--at", patchReportDate)
	if s.out.BasesAfter != exitOK {
		return fmt.Errorf("imgctl bases exited %d after the rebase, want 0", s.out.BasesAfter)
	}
	return nil
}

// verifyNodes is step 7: the rebased index against a cluster's nodes.
func (s *story) verifyNodes() error {
	nodes := filepath.Join(s.root, "examples", "nodes.json")
	s.step("7. imgctl verify --nodes: the rebased index on a sample cluster (Linux amd64 and arm64, Windows ltsc2022 and ltsc2025)")
	if err := s.expect(exitOK, "verify", s.rebased, "--nodes", nodes); err != nil {
		return err
	}
	var err error
	if s.out.NodesBefore, err = s.nodes(s.ci, nodes); err != nil {
		return err
	}
	if s.out.NodesAfter, err = s.nodes(s.rebased, nodes); err != nil {
		return err
	}
	c := newChanges(s.w)
	c.nodes(s.out.NodesBefore, s.out.NodesAfter)
	return c.flush()
}

// release is step 8: sign the rebased index and promote it to a new
// release tag; the old release tag is immutable.
func (s *story) release() error {
	s.step("8. sign and promote the rebased index to a new release tag (the old one is immutable)")
	if err := s.expect(exitOK, "sign", s.rebased, "--key", s.key, "--attestations"); err != nil {
		return err
	}
	s.out.Retag = s.imgctl("promote", "--policy", s.policy, s.rebased, s.releases[0])
	if s.out.Retag != exitError {
		return fmt.Errorf("promote over the existing release tag exited %d, want %d", s.out.Retag, exitError)
	}
	if err := s.expect(exitOK, "promote", "--policy", s.policy, s.rebased, s.releases[1]); err != nil {
		return err
	}
	var err error
	if s.out.NextRelease, err = s.inspect(s.releases[1]); err != nil {
		return err
	}
	if s.out.NextRelease.Digest != s.out.Rebased.Digest {
		return errors.New("the new release tag does not hold the rebased index")
	}
	c := newChanges(s.w)
	c.row(s.releases[1], Variant{}, Variant{Digest: s.out.NextRelease.Digest})
	c.state(s.out.Release, s.out.NextRelease)
	return c.flush()
}

// patchReport is what the fleet step reads of imgctl patch -o json.
type patchReport struct {
	Images []struct {
		Ref     string `json:"ref"`
		Outcome string `json:"outcome"`
		Tag     string `json:"tag"`
		Earlier bool   `json:"earlier"`
	} `json:"images"`
}

// fleet is step 9: the monthly job for a fleet of three release tags, two
// stale (the first release, and a second image's release built from the
// same index) and one current (the release step 8 promoted). imgctl patch
// rebases, verifies, signs and promotes the stale ones to their next
// release tags; a second run finds those promotions and writes nothing.
func (s *story) fleet() error {
	s.step("9. imgctl patch: a fleet of three release tags, two stale and one current, rebased, verified, signed and promoted in one command")
	tools := s.releases[0][:strings.LastIndex(s.releases[0], "/")] + "/hello-tools:2.1.0"
	if err := s.expect(exitOK, "promote", "--policy", s.policy, s.ci, tools); err != nil {
		return err
	}
	fleet := []string{s.releases[0], tools, s.releases[1]}
	args := append([]string{"patch", "--key", s.key, "--policy", s.policy}, fleet...)
	if err := s.expect(exitOK, args...); err != nil {
		return err
	}
	var rep patchReport
	if err := s.queryJSON(&rep, args...); err != nil {
		return err
	}
	got := map[string]string{}
	for _, im := range rep.Images {
		got[im.Ref] = im.Outcome
		if im.Outcome == "promoted" {
			s.out.Patched = append(s.out.Patched, im.Tag)
			if !im.Earlier {
				return fmt.Errorf("the second run of imgctl patch promoted %s again", im.Ref)
			}
		}
	}
	if got[s.releases[0]] != "promoted" || got[tools] != "promoted" || got[s.releases[1]] != "current" {
		return fmt.Errorf("imgctl patch: outcomes %v, want the two stale releases promoted and %s current", got, s.releases[1])
	}
	return nil
}
