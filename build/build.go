package build

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/index"
)

// Build lints the Dockerfile for every variant, refuses an existing tag
// unless Force, solves every variant on its builder (concurrently, each
// pushed by digest; with Nodes, each on its node), and merges them into
// one index at Tag. Preflight findings come back as a *PreflightError
// before any builder is contacted, except a RUN in a Windows stage mapped
// to a Windows node: that one is checked against the node's workers and
// dropped when the node is native Windows (see NativeWindows).
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
	p, err := Prepare(o)
	if err != nil && !p.waivable(err) {
		return nil, err
	}
	if err := checkTag(ctx, o); err != nil {
		return nil, err
	}
	conns, err := p.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = conns.close() }()
	if err := p.applyWaivers(conns.workers); err != nil {
		return nil, err
	}
	if err := p.resolveBases(ctx, rc); err != nil {
		return nil, err
	}
	dfDir, cleanup, err := p.dockerfileDir()
	if err != nil {
		return nil, err
	}
	defer cleanup()
	digests, err := p.solveAll(ctx, conns, &o, dfDir)
	closeStatus()
	if err != nil {
		return nil, err
	}
	log.Info("merging", "variants", len(digests), "tag", o.Tag.String())
	sources := p.sources(o.Tag, digests)
	res, err := index.Create(ctx, o.Tag, sources, index.Options{
		Remote: rc.Remote(ctx), Logger: log, Annotations: o.Annotations, Force: o.Force,
		Transport: rc.RoundTripper(), Keychain: rc.Keychain,
	})
	if err != nil {
		return nil, fmt.Errorf("merging into %s: %w", o.Tag, err)
	}
	return p.result(res, digests)
}

// Plan is a build checked and split into variants, ready to solve.
type Plan struct {
	// Variants are the solves.
	Variants []Variant
	// Bases are the final stage's bases per variant, in variant order.
	Bases [][]FinalBase
	// Assignments are the daemons of the variants, in variant order.
	Assignments []Assignment
	// File is the Dockerfile path; Dockerfile its content.
	File       string
	Dockerfile []byte

	contextDir  string
	syntaxImage string
	resolved    map[string]ResolvedBase // by base name + platform key
	findings    [][]Finding             // Preflight's, per variant
}

// Prepare reads the Dockerfile, plans the variants, assigns them to
// Options.Nodes (AssignNodes) and runs Preflight for each; findings come
// back as a *PreflightError. It does no I/O beyond
// reading the Dockerfile, so `imgctl lint` and Build share it.
func Prepare(o Options) (*Plan, error) {
	file := o.Dockerfile
	if file == "" {
		file = filepath.Join(o.ContextDir, "Dockerfile")
	}
	dt, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading Dockerfile: %w", err)
	}
	vs, err := PlanVariants(o.Variants)
	if err != nil {
		return nil, err
	}
	vs, as, err := AssignNodes(vs, o.Nodes, o.Builder)
	if err != nil {
		return nil, err
	}
	p := &Plan{Variants: vs, Assignments: as, File: file, Dockerfile: dt, contextDir: o.ContextDir, syntaxImage: o.SyntaxImage}
	var findings []Finding
	for _, v := range vs {
		po := PreflightOptions{Platforms: v.Platforms, BuildArgs: v.BuildArgs, Target: o.Target}
		fs, err := Preflight(bytes.NewReader(dt), file, po)
		if err != nil {
			return nil, err
		}
		findings = append(findings, fs...)
		p.findings = append(p.findings, fs)
		fb, err := FinalBases(dt, file, po)
		if err != nil {
			return nil, err
		}
		p.Bases = append(p.Bases, fb)
	}
	if len(findings) > 0 {
		slices.SortFunc(findings, compareFindings)
		return p, &PreflightError{Findings: slices.CompactFunc(findings, func(a, b Finding) bool { return a == b })}
	}
	return p, nil
}

// checkTag refuses an existing tag unless Force, before anything is solved.
func checkTag(ctx context.Context, o Options) error {
	if o.Force {
		return nil
	}
	desc, err := remote.Head(o.Tag, o.Registry.Remote(ctx)...)
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("checking tag %s: %w", o.Tag, err)
	}
	return fmt.Errorf("%w %s (it points at %s; use --force to overwrite)", index.ErrTagExists, o.Tag, desc.Digest)
}
