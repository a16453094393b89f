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
	// Tags are Tag and Options.AlsoTags: each points at Ref after a push.
	Tags []name.Tag
	Ref  name.Digest
	// Pushed is false for a dry run and when the tag already pointed at
	// this index.
	Pushed bool
	// Copied counts children uploaded to the target repository; Present
	// those that were there already.
	Copied, Present int
}

// tags returns the target and Options.AlsoTags.
func (s *session) tags(target name.Tag) []name.Tag {
	return append([]name.Tag{target}, s.o.AlsoTags...)
}

// readTags reads what every tag holds (one HEAD each), in the order of
// tags, after checking that they share one repository.
func (s *session) readTags(ctx context.Context, target name.Tag) ([]*v1.Hash, error) {
	tags := s.tags(target)
	if err := registry.SameRepository(tags); err != nil {
		return nil, err
	}
	existing := make([]*v1.Hash, len(tags))
	for i, t := range tags {
		h, err := s.rc.Head(ctx, t)
		if err != nil {
			return nil, err
		}
		existing[i] = h
	}
	return existing, nil
}

// check applies the tag rule to every tag as read before the merge
// (existing, nil for a tag not read), before anything is written, and
// returns the tags that need a write: not those that already point at
// the plan's index.
func (s *session) check(target name.Tag, plan *Plan, existing []*v1.Hash) ([]name.Tag, error) {
	var todo []name.Tag
	for i, t := range s.tags(target) {
		var h *v1.Hash
		if i < len(existing) {
			h = existing[i]
		}
		st := registry.TagState{Existing: h, Want: plan.Digest}
		switch {
		case st.Same():
			s.note("%s already points at %s: nothing to push", t, plan.Digest)
			continue
		case st.Overwrites():
			if err := st.Rule(t, s.o.Force, ""); err != nil {
				return nil, err
			}
			s.note("overwriting %s (was %s)", t, h)
		}
		todo = append(todo, t)
	}
	return todo, nil
}

// finish applies the tag rule to the tags as read before the merge, then
// publishes unless this is a dry run.
func (s *session) finish(ctx context.Context, target name.Tag, plan *Plan, existing []*v1.Hash) (*Result, error) {
	todo, err := s.check(target, plan, existing)
	if err != nil {
		return nil, err
	}
	return s.write(ctx, target, todo, plan)
}

// write publishes plan at the tags check left (none: nothing to push).
func (s *session) write(ctx context.Context, target name.Tag, todo []name.Tag, plan *Plan) (*Result, error) {
	res := &Result{Plan: plan, Tag: target, Tags: s.tags(target), Ref: target.Context().Digest(plan.Digest.String())}
	plan.Notes = append(plan.Notes, s.takeNotes()...)
	if len(todo) == 0 || s.o.DryRun {
		return res, nil
	}
	if err := s.publish(ctx, todo, plan, res); err != nil {
		return nil, err
	}
	res.Pushed = true
	return res, nil
}
