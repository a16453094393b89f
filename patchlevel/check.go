package patchlevel

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"golang.org/x/sync/errgroup"

	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/registry"
)

// Options configure Check.
type Options struct {
	// Registry is the run's client; nil means registry.New().
	Registry *registry.Client
	// At is the report's date; the zero Date means today (UTC).
	At platform.Date
}

// Check reports the patch level of each subject on o.At. It lists each
// base repository's tags once and reads the config of each variant's own
// revision and of each newer one (see reader.revision), at most the
// client's Jobs at a time. What cannot be told for one variant (no
// os.version, no base, no revision tags, a base that cannot be read) is
// reported in that variant's Status and Reason, never guessed; only a
// cancelled context is an error.
func Check(ctx context.Context, subjects []Subject, o Options) (*Report, error) {
	rc := registry.Or(o.Registry)
	at := o.At
	if at.IsZero() {
		at = platform.DateOf(time.Now())
	}
	rep := &Report{At: at, Variants: make([]Variant, len(subjects))}
	tags := tagLister{rc: rc, lists: map[string]*tagList{}}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(rc.Jobs())
	for i, s := range subjects {
		g.Go(func() error {
			rep.Variants[i] = check(gctx, reader{rc: rc}, &tags, s, at)
			return gctx.Err()
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return rep, ctx.Err()
}

// check reports on one subject.
func check(ctx context.Context, r reader, tags *tagLister, s Subject, at platform.Date) Variant {
	v := Variant{Platform: platform.Format(s.Platform), Digest: s.Digest, Release: ReleaseUnknown}
	ver, err := platform.ParseVersion(s.Platform.OSVersion)
	if err != nil {
		v.unknown(fmt.Sprintf("no readable os.version (%q)", s.Platform.OSVersion))
		return v
	}
	v.Build, v.Revision = ver.Build, ver.Revision
	v.lifecycleOn(at)
	if s.Base == nil {
		v.unknown("the variant names no base image (no org.opencontainers.image.base.name)")
		return v
	}
	repo := s.Base.Context()
	v.Base = s.Base.String()
	list, err := tags.list(ctx, repo)
	if err != nil {
		v.unknown(fmt.Sprintf("cannot list the tags of %s: %v", repo, err))
		return v
	}
	revs := revisionTags(list, ver.Build, s.Platform.Architecture)
	if len(revs) == 0 {
		v.unknown(fmt.Sprintf("%s has no 10.0.%d.REVISION tags", repo, ver.Build))
		return v
	}
	own := slices.IndexFunc(revs, func(rt revisionTag) bool { return rt.revision == ver.Revision })
	if own < 0 {
		v.unknown(fmt.Sprintf("%s has no tag of the variant's revision %s", repo, ver))
		return v
	}
	read, err := readRevisions(ctx, r, repo, revs[own:], s.Platform)
	if err != nil {
		v.unknown(err.Error())
		return v
	}
	v.assess(read[0], read[1:], at)
	return v
}

// readRevisions reads the revisions one after another; the variants are
// what runs concurrently.
func readRevisions(ctx context.Context, r reader, repo name.Repository, revs []revisionTag, want platform.Platform) ([]Revision, error) {
	out := make([]Revision, len(revs))
	for i, rt := range revs {
		rev, err := r.revision(ctx, repo, rt, want)
		if err != nil {
			return nil, err
		}
		out[i] = rev
	}
	return out, nil
}

// assess fills the counts from the variant's own revision and the newer
// ones, leaving out those published after the report's date.
func (v *Variant) assess(own Revision, newer []Revision, at platform.Date) {
	published := own.Created
	v.Published = &published
	v.Newest = &own
	var dates []time.Time
	v.Newer = nil
	for _, n := range newer {
		if platform.DateOf(n.Created).After(at.Time) {
			continue
		}
		v.Newer = append(v.Newer, n)
		dates = append(dates, n.Created)
		v.Newest = &v.Newer[len(v.Newer)-1]
	}
	behind, pts := len(v.Newer), platform.PatchTuesdaysBehind(own.Created, dates)
	v.RevisionsBehind, v.PatchTuesdaysBehind = &behind, &pts
	v.Status = StatusCurrent
	if behind > 0 {
		first := slices.MinFunc(dates, time.Time.Compare)
		days := platform.DaysBetween(first, at.Time)
		v.FixAvailableDays = &days
		v.Status = StatusBehind
	}
}

// tagLister lists each repository's tags once.
type tagLister struct {
	rc    *registry.Client
	mu    sync.Mutex
	lists map[string]*tagList
}

type tagList struct {
	once sync.Once
	tags []string
	err  error
}

func (l *tagLister) list(ctx context.Context, repo name.Repository) ([]string, error) {
	l.mu.Lock()
	tl := l.lists[repo.String()]
	if tl == nil {
		tl = &tagList{}
		l.lists[repo.String()] = tl
	}
	l.mu.Unlock()
	tl.once.Do(func() { tl.tags, tl.err = l.rc.ListTags(ctx, repo) })
	if tl.err != nil && errors.Is(tl.err, context.Canceled) {
		return nil, tl.err
	}
	return tl.tags, tl.err
}
