package index

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/registry"
)

// session is one Create, Remove or PublishPrepared: the run's registry
// client, with every repository's scope declared up front so that each
// registry is authenticated once, and the notes gathered on the way.
type session struct {
	o   Options
	rc  *registry.Client
	log *slog.Logger

	mu    sync.Mutex
	notes []string
}

// newSession declares pull scope on the sources and push scope on the
// target (pull for a dry run, which writes nothing).
func newSession(o Options, target name.Repository, sources []name.Reference) *session {
	rc := registry.Or(o.Registry)
	pull := make([]name.Repository, 0, len(sources)+1)
	for _, ref := range sources {
		pull = append(pull, ref.Context())
	}
	push := []name.Repository{target}
	if o.DryRun {
		pull, push = append(pull, target), nil
	}
	rc.Scope(pull, push)
	return &session{o: o, rc: rc, log: o.logger()}
}

// note records something the merge changed, and logs it.
func (s *session) note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.log.Info(msg)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notes = append(s.notes, msg)
}

func (s *session) takeNotes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.notes
	s.notes = nil
	return n
}

// Result is what Create and Remove did.
type Result struct {
	*Plan
	// Tag is the target tag and Ref the pushed index by digest.
	Tag name.Tag
	Ref name.Digest
	// Pushed is false for a dry run and when the tag already pointed at
	// this index.
	Pushed bool
	// Copied counts children uploaded to the target repository; Present
	// those that were there already.
	Copied, Present int
}

// finish applies the tag rule to the tag as read before the merge, then
// publishes unless this is a dry run.
func (s *session) finish(ctx context.Context, target name.Tag, plan *Plan, existing *v1.Hash) (*Result, error) {
	res := &Result{Plan: plan, Tag: target, Ref: target.Context().Digest(plan.Digest.String())}
	st := registry.TagState{Existing: existing, Want: plan.Digest}
	switch {
	case st.Same():
		s.note("%s already points at %s: nothing to push", target, plan.Digest)
		plan.Notes = append(plan.Notes, s.takeNotes()...)
		return res, nil
	case st.Overwrites():
		if err := st.Rule(target, s.o.Force, s.o.ForceFlag); err != nil {
			return nil, err
		}
		s.note("overwriting %s (was %s)", target, existing)
	}
	plan.Notes = append(plan.Notes, s.takeNotes()...)
	if s.o.DryRun {
		return res, nil
	}
	if err := s.publish(ctx, target, plan, res); err != nil {
		return nil, err
	}
	res.Pushed = true
	return res, nil
}
