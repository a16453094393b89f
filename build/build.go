package build

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/moby/buildkit/client"
	"github.com/moby/buildkit/session"

	"github.com/imgctl/imgctl/build/content"
	"github.com/imgctl/imgctl/build/graft"
	"github.com/imgctl/imgctl/build/nodes"
	"github.com/imgctl/imgctl/build/skeleton"
	"github.com/imgctl/imgctl/build/variant"
	"github.com/imgctl/imgctl/findings"
	"github.com/imgctl/imgctl/lint"
	"github.com/imgctl/imgctl/registry"
)

// Build lints the Dockerfile for every variant, refuses an existing tag
// unless Force, solves every variant on its builder (concurrently, each
// pushed by digest; with Nodes, each on its node), and merges them into
// one index at Tag (a single Linux solve of several platforms is tagged by
// BuildKit itself, see Plan.tagsDirectly). Preflight findings come back as
// a *lint.Error before any builder is contacted, except a RUN in a
// Windows stage mapped to a Windows node: that one is checked against the
// node's workers and dropped when the node is native Windows (see
// nodes.NativeWindows).
func Build(ctx context.Context, o Options) (*Result, error) {
	var closeOnce sync.Once
	closeStatus := func() {
		closeOnce.Do(func() {
			if o.Status != nil {
				close(o.Status)
			}
		})
	}
	defer closeStatus()
	log, rc := o.logger(), o.registry()
	if err := validateAttestations(&o); err != nil {
		return nil, err
	}
	if o.NeedsBaseFiles() {
		o.note(sbomNote)
	} else if o.SBOM != nil {
		o.note(sbomReferenceNote)
	}
	p, err := Prepare(o)
	if err != nil && !p.waivable(err) {
		return nil, err
	}
	// One authenticated transport per registry for the whole build: the
	// tag check, the merge and a base read the builder cannot answer (see
	// baseResolver.readIndex) share one handshake.
	push := []name.Repository{o.Tag.Context()}
	skelRepo, explicit, err := skeletonRepository(&o, rc)
	if err != nil {
		return nil, err
	}
	if explicit {
		push = append(push, skelRepo)
	}
	rc.Scope(p.baseRepos(rc), push)
	r := newRun(p, &o, rc, skelRepo, explicit)
	if err := r.prepareIO(ctx); err != nil {
		return nil, err
	}
	defer func() { _ = r.conns.close() }()
	dfDir, cleanup, err := p.dockerfileDir()
	if err != nil {
		return nil, err
	}
	defer cleanup()
	r.dfDir = dfDir
	exps, err := r.solveAll(ctx)
	closeStatus()
	if err != nil {
		return nil, err
	}
	for i, ex := range exps {
		if err := p.checkBuilt(i, ex); err != nil {
			return nil, err
		}
	}
	log.Info("merging", "variants", len(exps), "tag", o.Tag.String())
	res, err := r.publish(ctx, exps)
	if err != nil {
		return nil, fmt.Errorf("merging into %s: %w", o.Tag, err)
	}
	digests := make([]v1.Hash, len(exps))
	for i, ex := range exps {
		digests[i] = ex.Top.Digest
	}
	return p.result(res, digests)
}

// run is the state of one Build that its steps share: the plan, the
// options, the command's registry client, the connections to the daemons
// (set by prepareIO) and what the grafts and pre-mounts share.
type run struct {
	p     *Plan
	o     *Options
	rc    *registry.Client
	conns *connections
	// premounts and grafts share the build's one Copier into the tag's
	// repository (each base layer is mounted once); grafts holds the
	// skeletons.
	premounts *content.Premounter
	grafts    *graft.Run
	// dfDir is the directory the solves mount as the Dockerfile's (see
	// Plan.dockerfileDir).
	dfDir string
}

func newRun(p *Plan, o *Options, rc *registry.Client, skelRepo name.Repository, explicit bool) *run {
	sk := skeleton.NewMaker(o.SkeletonCache)
	sk.Cache = skeleton.NewRegistryCache(rc, skelRepo, explicit, o.note)
	cp := rc.Copier(o.Tag.Context())
	pm := &content.Premounter{Registry: rc, Copier: cp, Logger: o.logger(), Note: o.note}
	return &run{p: p, o: o, rc: rc, premounts: pm, grafts: &graft.Run{
		Registry:    rc,
		Copier:      cp,
		Skeletons:   sk,
		Logger:      o.logger(),
		Note:        o.note,
		Attachables: func() ([]session.Attachable, error) { return attachables(nil, nil, o.Stderr) },
		Progress: func(ctx context.Context, label string) (chan *client.SolveStatus, func()) {
			var fwd sync.WaitGroup
			return StatusTo(ctx, &fwd, o.Status, label), fwd.Wait
		},
	}}
}

// skeletonRepository is the repository of the registry skeleton cache:
// Options.SkeletonRepository (explicit), else the tag's.
func skeletonRepository(o *Options, rc *registry.Client) (name.Repository, bool, error) {
	if o.SkeletonRepository == "" {
		return o.Tag.Context(), false, nil
	}
	repo, err := name.NewRepository(o.SkeletonRepository, rc.NameOptions()...)
	if err != nil {
		return name.Repository{}, false, fmt.Errorf("%w: skeleton cache repository %q: %w", ErrInvalidOptions, o.SkeletonRepository, err)
	}
	return repo, true, nil
}

// prepareIO does what precedes the solves: the tag check and, meanwhile,
// the connection to every daemon (r.conns), the waivers that need its
// workers and the base resolution through those daemons (resolveBases).
// Errors are reported in a fixed order: a taken tag, then the daemons,
// then the waivers, then the bases. It waits for the tag check even after
// another step failed, so that no request of this build is still in flight
// when Build returns. On error it closes what it opened.
func (r *run) prepareIO(ctx context.Context) error {
	var tagErr, baseErr error
	var wg sync.WaitGroup
	wg.Go(func() { tagErr = r.checkTag(ctx) })
	conns, err := r.p.connect(ctx)
	if err == nil {
		err = r.p.applyWaivers(conns.workers)
	}
	if err == nil {
		r.conns = conns
		baseErr = r.resolveBases(ctx)
	}
	wg.Wait()
	for _, e := range []error{tagErr, err, baseErr} {
		if e != nil {
			if conns != nil {
				_ = conns.close()
			}
			r.conns = nil
			return e
		}
	}
	return nil
}

// Plan is a build checked and split into variants, ready to solve.
type Plan struct {
	// Variants are the solves.
	Variants []variant.Variant
	// Bases are the final stage's bases per variant, in variant order.
	Bases [][]lint.FinalBase
	// Assignments are the daemons of the variants, in variant order.
	Assignments []nodes.Assignment
	// File is the Dockerfile path.
	File string
	// Dockerfile is the Dockerfile's content, as Preflight read it.
	Dockerfile []byte

	contextDir  string
	syntaxImage string
	resolved    map[string]ResolvedBase // by resolvedKey
	findings    [][]findings.Finding    // Preflight's, per variant
	lintOpts    []lint.Options          // Preflight's, per variant
	native      []bool                  // per variant: solved on a native Windows node (applyWaivers)
	alsoTags    int                     // len(Options.AlsoTags): several tags are published by imgctl (tagsDirectly)
}

// Prepare reads the Dockerfile, plans the variants (variant.PlanVariants),
// assigns them to Options.Nodes (nodes.AssignNodes) and runs
// lint.Preflight for each; findings come back as a *lint.Error. It does no
// I/O beyond reading the Dockerfile and what Options.BaseResolver reads, so
// `imgctl lint` and Build share it.
func Prepare(o Options) (*Plan, error) {
	file := o.Dockerfile
	if file == "" {
		file = filepath.Join(o.ContextDir, "Dockerfile")
	}
	dt, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading Dockerfile: %w", err)
	}
	vs, err := variant.PlanVariants(o.Variants)
	if err != nil {
		return nil, err
	}
	vs, as, err := nodes.AssignNodes(vs, o.Nodes, o.Builder)
	if err != nil {
		return nil, err
	}
	p := &Plan{Variants: vs, Assignments: as, File: file, Dockerfile: dt, contextDir: o.ContextDir, syntaxImage: o.SyntaxImage, alsoTags: len(o.AlsoTags)}
	releases := 0
	for _, v := range vs {
		if v.Release.Build != 0 {
			releases++
		}
	}
	var all []findings.Finding
	for _, v := range vs {
		lo := lint.Options{Platforms: v.Platforms, BuildArgs: v.BuildArgs, Target: o.Target,
			WindowsReleases: releases, Resolve: o.BaseResolver}
		fs, err := lint.Preflight(bytes.NewReader(dt), file, lo)
		if err != nil {
			return nil, err
		}
		all = append(all, fs...)
		p.findings = append(p.findings, fs)
		p.lintOpts = append(p.lintOpts, lo)
		fb, err := lint.FinalBases(dt, file, lo)
		if err != nil {
			return nil, err
		}
		p.Bases = append(p.Bases, fb)
	}
	if len(all) > 0 {
		return p, lint.NewError(all)
	}
	return p, nil
}

// checkTag refuses an existing tag (Tag or any of AlsoTags) unless Force,
// before anything is solved. The digest to publish is not known yet, so
// any existing tag is refused: a build never makes the same index twice
// (its provenance and timestamps differ).
func (r *run) checkTag(ctx context.Context) error {
	o, rc := r.o, r.rc
	tags := append([]name.Tag{o.Tag}, o.AlsoTags...)
	if err := registry.SameRepository(tags); err != nil || o.Force {
		return err
	}
	for _, t := range tags {
		h, err := rc.Head(ctx, t)
		if err != nil {
			return err
		}
		if h != nil {
			return registry.TagExistsError(t, *h, "")
		}
	}
	return nil
}
