package index

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// session is one Create or Remove: one Puller so that every repository is
// authenticated once, and the notes gathered on the way.
type session struct {
	o      Options
	log    *slog.Logger
	puller *remote.Puller
	direct *direct // the target repository's direct client, when Transport is set

	mu    sync.Mutex
	notes []string
}

// newSession sets up the clients. Unless this is a dry run, a Transport
// gives a direct client of the target repository (see direct), which then
// also answers the HEADs there.
func newSession(ctx context.Context, o Options, target name.Repository, sources []name.Reference) (*session, error) {
	p, err := remote.NewPuller(o.Remote...)
	if err != nil {
		return nil, fmt.Errorf("setting up registry client: %w", err)
	}
	s := &session{o: o, log: o.logger(), puller: p}
	if o.Transport != nil && !o.DryRun {
		if s.direct, err = newDirect(ctx, &s.o, target, sources); err != nil {
			return nil, err
		}
	}
	return s, nil
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

// head returns the digest ref points at, or nil when it does not exist. A
// failure of the direct client is retried with the Puller.
func (s *session) head(ctx context.Context, ref name.Reference) (*v1.Hash, error) {
	if s.direct != nil && ref.Context().Name() == s.direct.repo.Name() {
		h, err := s.direct.head(ctx, ref.Identifier())
		if err == nil {
			return h, nil
		}
		s.log.Debug("direct HEAD failed; retrying with the Puller", "ref", ref.String(), "err", err)
	}
	d, err := s.puller.Head(ctx, ref)
	if isNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("checking %s: %w", ref, err)
	}
	return &d.Digest, nil
}

func isNotFound(err error) bool {
	var terr *transport.Error
	return errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound
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

// finish applies the tag rule, then publishes unless this is a dry run.
func (s *session) finish(ctx context.Context, target name.Tag, plan *Plan, existing *v1.Hash) (*Result, error) {
	res := &Result{Plan: plan, Tag: target, Ref: target.Context().Digest(plan.Digest.String())}
	if existing != nil {
		switch {
		case *existing == plan.Digest:
			s.note("%s already points at %s: nothing to push", target, plan.Digest)
			plan.Notes = append(plan.Notes, s.takeNotes()...)
			return res, nil
		case !s.o.Force:
			return nil, fmt.Errorf("%w %s (it points at %s; use force to overwrite)", ErrTagExists, target, existing)
		default:
			s.note("overwriting %s (was %s)", target, existing)
		}
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
