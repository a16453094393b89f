package fleet

import (
	"context"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	"golang.org/x/sync/errgroup"

	"github.com/imgctl/imgctl/patchlevel"
	"github.com/imgctl/imgctl/policy"
	"github.com/imgctl/imgctl/rebase"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/verify"
)

// Run works on every reference in refs, at most Jobs at a time, and
// hands each image's report to emit as soon as it is done (in the order
// they finish), so that a run over thousands of images holds only the
// images in flight. One image's failure does not stop the others; it is
// its report's outcome. Run returns the summary, and an error only when
// emit fails or ctx ends. A reference listed twice is skipped the second
// time.
func Run(ctx context.Context, refs []name.Reference, o Options, emit func(Image) error) (Summary, error) {
	rc := registry.Or(o.Registry)
	tags := o.Tags
	if tags == nil {
		tags, _ = NewTagRule("", "")
	}
	gate := o.Gate
	if gate == nil {
		var err error
		if gate, err = policy.NewGate(nil, verify.Options{}, nil, ""); err != nil {
			return Summary{}, err
		}
	}
	levels := patchlevel.NewCache(rc)
	runGate := *gate
	runGate.Registry = rc
	if runGate.PatchLevel != nil {
		pl := *runGate.PatchLevel
		pl.Cache = levels
		if !o.At.IsZero() {
			pl.At = o.At
		}
		runGate.PatchLevel = &pl
	}
	r := &runner{o: o, rc: rc, tags: tags, gate: &runGate, shared: rebase.NewShared(), levels: levels, log: o.logger()}
	var (
		mu      sync.Mutex
		sum     Summary
		done    int
		emitErr error
		seen    = map[string]bool{}
	)
	finish := func(im Image) {
		mu.Lock()
		defer mu.Unlock()
		sum.Add(im)
		done++
		if emitErr == nil {
			emitErr = emit(im)
		}
		if o.Progress != nil {
			o.Progress(done, len(refs))
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(o.jobs())
	for _, ref := range refs {
		if seen[ref.String()] {
			finish(Image{Ref: ref.String(), Outcome: Skipped, Reason: "listed twice", Variants: []Variant{}})
			continue
		}
		seen[ref.String()] = true
		g.Go(func() error {
			finish(r.image(gctx, ref))
			return nil
		})
	}
	_ = g.Wait()
	sum.BaseLookups, sum.BaseConfigReads, sum.Requests = r.shared.ManifestReads(), r.shared.ConfigReads(), rc.Requests()
	if emitErr != nil {
		return sum, emitErr
	}
	return sum, ctx.Err()
}
