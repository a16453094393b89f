package bake

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/build"
	"github.com/imgctl/imgctl/build/nodes"
	"github.com/imgctl/imgctl/registry"
)

// CheckTags reads every tag of every target before anything is built:
// one that exists is refused (registry.ErrTagExists, naming the target),
// as imgctl build refuses it, so that a bake that would overwrite a tag
// writes nothing. Every tag's repository is declared to rc first (one
// handshake per registry for the whole bake).
func CheckTags(ctx context.Context, rc *registry.Client, ts []Target) error {
	var repos []name.Repository
	for _, t := range ts {
		repos = append(repos, t.Tags[0].Context())
	}
	rc.Scope(nil, repos)
	var errs []error
	for _, t := range ts {
		for _, tag := range t.Tags {
			if _, err := rc.CheckTag(ctx, tag, v1.Hash{}, false, ""); err != nil {
				errs = append(errs, fmt.Errorf("target %q (%s): %w", t.Name, t.Where, err))
			}
		}
	}
	return errors.Join(errs...)
}

// Outcome is what one target's build came to.
type Outcome struct {
	// Target is the target.
	Target Target
	// Result is what build.Build published; nil when Err is set before
	// the publish.
	Result *build.Result
	// Err is the build's error (a *lint.Error for lint findings), or
	// After's.
	Err error
}

// BuildOptions say how Build runs the targets.
type BuildOptions struct {
	// Base are the options every target's build starts from (see
	// Target.Options): the builder and nodes, the registry client, the
	// logger, notes. Its Status receives the status of every target's
	// solves, each vertex under "[TARGET]", and is closed when the last
	// target ends; nil discards.
	// When Base.Nodes name a platform more than once, those nodes are a
	// pool: each target gets one of them per platform, the one running
	// the fewest targets when it starts (nodes.Pool), and a note says which.
	Base build.Options
	// Jobs is how many targets build at once; less than 1 means 1.
	Jobs int
	// After, when set, runs once a target's build has succeeded, in the
	// target's slot (imgctl verifies the index there); its error becomes
	// the target's.
	After func(ctx context.Context, t Target, res *build.Result) error
}

// Build builds the targets, at most Jobs at once, each with build.Build:
// a target that fails does not stop the others; a pool of nodes spreads
// them over its daemons. The outcomes are in the order of ts.
func Build(ctx context.Context, ts []Target, o BuildOptions) []Outcome {
	status := o.Base.Status
	out := make([]Outcome, len(ts))
	slots := make(chan struct{}, max(o.Jobs, 1))
	spread := nodes.NewPool(o.Base.Nodes)
	var builds, forwards sync.WaitGroup
	for i, t := range ts {
		builds.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			bo := t.Options(o.Base)
			if spread != nil {
				bo.Nodes = spread.Take()
				defer spread.Release(bo.Nodes)
				if bo.Note != nil {
					bo.Note(fmt.Sprintf("target %s builds on %s", t.Name, nodes.FormatNodes(bo.Nodes)))
				}
			}
			bo.Status = nil
			if status != nil {
				bo.Status = build.StatusTo(ctx, &forwards, status, t.Name)
			}
			res, err := build.Build(ctx, bo)
			if err == nil && o.After != nil {
				err = o.After(ctx, t, res)
			}
			out[i] = Outcome{Target: t, Result: res, Err: err}
		})
	}
	builds.Wait()
	forwards.Wait() // every StatusTo ran before its build ended
	if status != nil {
		close(status)
	}
	return out
}
