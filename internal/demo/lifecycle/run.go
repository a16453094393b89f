package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/imgctl/imgctl/internal/buildtest"
	"github.com/imgctl/imgctl/internal/regtest"
	"github.com/imgctl/imgctl/verify"
)

// outcome is what the steps observed, read from imgctl's output; the test
// asserts the story's transitions on it.
type outcome struct {
	built, rebased          state                 // the CI index after the build and after the rebase
	baseBefore, baseAfter   variant               // the ltsc2025 base tag before and after Patch Tuesday
	basesBefore, basesAfter int                   // imgctl bases exit codes before and after the rebase
	nodesBefore, nodesAfter []verify.TargetResult // what each node of the sample cluster pulls
	release, nextRelease    state                 // the first and the second release tag
	retag                   int                   // exit code of promoting the rebased index to the first release tag
}

// story holds what the steps share.
type story struct {
	ctx      context.Context
	w        io.Writer
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
	out      outcome
}

// password protects the demo's cosign key; keygen and sign read it from
// stdin (COSIGN_PASSWORD wins when it is set).
const password = "lifecycle-demo"

// run tells the whole story, writing it to w, and returns what it observed.
// It fails when a step does not end as the story says it must.
func run(ctx context.Context, w io.Writer) (*outcome, error) {
	root, err := buildtest.ModuleRoot()
	if err != nil {
		return nil, err
	}
	ci, err := regtest.Start()
	if err != nil {
		return nil, err
	}
	defer ci.Close()
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
	s := &story{ctx: ctx, w: w, root: root, tmp: tmp,
		display:  strings.NewReplacer(tmp+string(filepath.Separator), "", root+string(filepath.Separator), ""),
		ci:       ci.Host() + "/hello:ci-1",
		rebased:  ci.Host() + "/hello:ci-1-rebased",
		releases: [2]string{prod.Host() + "/release/hello:1.0", prod.Host() + "/release/hello:1.0.1"},
	}
	s.step("setup: CI registry %s (no referrers API), release registry %s (referrers API)", ci.Host(), prod.Host())
	fmt.Fprintln(w, "seeding the bases: golang (this machine's Go toolchain), distroless-like, nanoserver-like ltsc2022 and ltsc2025")
	s.bases, err = buildtest.SeedBases(ci.Host())
	defer func() { _ = buildtest.RemoveLayerCache() }()
	if err != nil {
		return nil, fmt.Errorf("seeding bases: %w", err)
	}
	fmt.Fprintln(w, "starting buildkitd")
	d, err := buildtest.StartBuildkitd(ctx, buildtest.Options{InsecureRegistries: []string{ci.Host()}, StartTimeout: time.Minute})
	if err != nil {
		return nil, err
	}
	defer func() { _ = d.Close() }()
	s.builder = d.Addr

	for _, f := range []func() error{s.build, s.sign, s.promote, s.patchTuesday, s.stale, s.rebase, s.verifyNodes, s.release} {
		if err := f(); err != nil {
			return &s.out, err
		}
	}
	return &s.out, nil
}

// step starts a step of the story.
func (s *story) step(format string, args ...any) {
	fmt.Fprintf(s.w, "\n== "+format+"\n", args...)
}
