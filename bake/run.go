package bake

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/moby/buildkit/client"

	"github.com/imgctl/imgctl/build"
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
	Base build.Options
	// Jobs is how many targets build at once; less than 1 means 1.
	Jobs int
	// After, when set, runs once a target's build has succeeded, in the
	// target's slot (imgctl verifies the index there); its error becomes
	// the target's.
	After func(ctx context.Context, t Target, res *build.Result) error
}

// Build builds the targets, at most Jobs at once, each with build.Build:
// a target that fails does not stop the others. The outcomes are in the
// order of ts.
func Build(ctx context.Context, ts []Target, o BuildOptions) []Outcome {
	status := o.Base.Status
	out := make([]Outcome, len(ts))
	slots := make(chan struct{}, max(o.Jobs, 1))
	var builds, forwards sync.WaitGroup
	for i, t := range ts {
		builds.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			bo := t.Options(o.Base)
			bo.Status = nil
			if status != nil {
				ch := make(chan *client.SolveStatus)
				forwards.Go(func() { build.ForwardStatus(ctx, status, ch, t.Name) })
				bo.Status = ch
			}
			res, err := build.Build(ctx, bo)
			if err == nil && o.After != nil {
				err = o.After(ctx, t, res)
			}
			out[i] = Outcome{Target: t, Result: res, Err: err}
		})
	}
	builds.Wait()
	forwards.Wait() // every forwards.Go ran before its build ended
	if status != nil {
		close(status)
	}
	return out
}
