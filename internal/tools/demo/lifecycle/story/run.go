package story

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/imgctl/imgctl/internal/testing/buildtest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/verify"
)

// Runner runs one imgctl command with args, as the imgctl binary would,
// and returns its exit code; cli.Execute is one.
type Runner func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int

// Config is what the story runs with.
type Config struct {
	// Imgctl runs imgctl's commands; the caller passes cli.Execute.
	// Required.
	Imgctl Runner
	// Version is the VERSION build arg of the build step ("1.0" in the
	// demo). Required.
	Version string
	// BuildProgress is the build step's --progress; "" means quiet, as
	// the demo shows it. A test passes rawjson to read the solve's
	// vertices from the transcript.
	BuildProgress string
	// Shared, when set, is the CI registry, its bases and the buildkitd
	// the story uses instead of starting its own. nil means Run starts
	// them and removes them when it returns.
	Shared *Fixture
}

// Fixture is a CI registry with the bases seeded and a buildkitd that
// reaches it, lent to Run by a caller that already has them (an
// end-to-end test). Run neither closes nor cleans them up; its Patch
// Tuesday moves Bases.Nanoserver2025 to the revision above the one it
// holds. Run always starts the release registry itself.
type Fixture struct {
	// Registry is the CI registry, host:port (plain HTTP on loopback),
	// without the referrers API.
	Registry string
	// Bases are what buildtest.SeedBases pushed to Registry.
	Bases buildtest.Bases
	// Builder is the address of the running buildkitd, which reaches
	// Registry over plain HTTP.
	Builder string
}

// Outcome is what the steps observed, read from imgctl's output; a test
// asserts the story's transitions on it.
type Outcome struct {
	// Built and Rebased are the CI index after the build and after the
	// rebase.
	Built, Rebased State
	// BaseBefore and BaseAfter are the image the ltsc2025 base tag holds
	// before and after Patch Tuesday.
	BaseBefore, BaseAfter Variant
	// BasesBefore and BasesAfter are imgctl bases' exit codes before and
	// after the rebase.
	BasesBefore, BasesAfter int
	// NodesBefore and NodesAfter are what each node of the sample cluster
	// pulls from the built and from the rebased index, in the cluster's
	// order.
	NodesBefore, NodesAfter []verify.TargetResult
	// Release and NextRelease are the first and the second release tag.
	Release, NextRelease State
	// Retag is the exit code of promoting the rebased index to the first
	// release tag.
	Retag int
	// Patched are the release tags imgctl patch promoted the fleet's two
	// stale images to (step 9), as its second run found them.
	Patched []string
}

// story holds what the steps share.
type story struct {
	ctx      context.Context
	w        io.Writer
	run      Runner
	version  string // the VERSION build arg
	progress string // the build step's --progress
	root     string // the module root
	tmp      string // keys, policy, metadata file
	display  *strings.Replacer
	bases    buildtest.Bases
	builder  string // buildkitd address
	ci       string // the CI tag that build writes
	rebased  string // the tag rebase writes
	releases [2]string
	key, pub string
	policy   string
	out      Outcome
}

// password protects the demo's cosign key; keygen and sign read it from
// stdin (COSIGN_PASSWORD wins when it is set).
const password = "lifecycle-demo"

// Run tells the whole story, writing it to w, and returns what it
// observed, so far when a step fails. It fails when a step does not end
// as the story says it must.
func Run(ctx context.Context, w io.Writer, c Config) (*Outcome, error) {
	switch {
	case c.Imgctl == nil:
		return nil, errors.New("no imgctl to run: Config.Imgctl is nil")
	case c.Version == "":
		return nil, errors.New("no VERSION to build: Config.Version is empty")
	}
	root, err := buildtest.ModuleRoot()
	if err != nil {
		return nil, err
	}
	ciHost, repo := "", "hello"
	if c.Shared == nil {
		ci, err := regtest.Start()
		if err != nil {
			return nil, err
		}
		defer ci.Close()
		ciHost = ci.Host()
	} else {
		// The lender's own tags are under hello: the story's are apart.
		ciHost, repo = c.Shared.Registry, "lifecycle/hello"
	}
	prod, err := regtest.Start(regtest.WithReferrers())
	if err != nil {
		return nil, err
	}
	defer prod.Close()
	tmp, err := os.MkdirTemp("", "imgctl-lifecycle-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	s := &story{ctx: ctx, w: w, run: c.Imgctl, version: c.Version, progress: c.BuildProgress, root: root, tmp: tmp,
		display:  strings.NewReplacer(tmp+string(filepath.Separator), "", root+string(filepath.Separator), ""),
		ci:       ciHost + "/" + repo + ":ci-1",
		rebased:  ciHost + "/" + repo + ":ci-1-rebased",
		releases: [2]string{prod.Host() + "/release/hello:1.0", prod.Host() + "/release/hello:1.0.1"},
	}
	s.step("setup: CI registry %s (no referrers API), release registry %s (referrers API)", ciHost, prod.Host())
	fx := c.Shared
	if fx == nil {
		own, stop, err := startFixture(ctx, w, ciHost)
		defer stop()
		if err != nil {
			return nil, err
		}
		fx = &own
	} else {
		fmt.Fprintf(w, "bases already seeded, buildkitd at %s\n", fx.Builder)
	}
	s.bases, s.builder = fx.Bases, fx.Builder

	for _, f := range []func() error{s.build, s.sign, s.promote, s.patchTuesday, s.stale, s.rebase, s.verifyNodes, s.release, s.fleet} {
		if err := f(); err != nil {
			return &s.out, err
		}
	}
	return &s.out, nil
}

// startFixture seeds the bases in the CI registry at host and starts
// buildkitd: the fixture of a Run that is lent none. stop, never nil,
// stops buildkitd and removes the layer files SeedBases wrote; call it
// even when startFixture fails.
func startFixture(ctx context.Context, w io.Writer, host string) (fx Fixture, stop func(), err error) {
	fmt.Fprintln(w, "seeding the bases: golang (this machine's Go toolchain), distroless-like, nanoserver-like ltsc2022 and ltsc2025")
	stop = func() { _ = buildtest.RemoveLayerCache() }
	if fx.Bases, err = buildtest.SeedBases(host); err != nil {
		return fx, stop, fmt.Errorf("seeding bases: %w", err)
	}
	fmt.Fprintln(w, "starting buildkitd")
	d, err := buildtest.StartBuildkitd(ctx, buildtest.Options{InsecureRegistries: []string{host}, StartTimeout: time.Minute})
	if err != nil {
		return fx, stop, err
	}
	fx.Registry, fx.Builder = host, d.Addr
	return fx, func() { _ = d.Close(); _ = buildtest.RemoveLayerCache() }, nil
}

// step starts a step of the story.
func (s *story) step(format string, args ...any) {
	fmt.Fprintf(s.w, "\n== "+format+"\n", args...)
}
