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
	// Cache holds the tag lists and revisions read by earlier Checks of
	// the same run; nil means a fresh one for this Check.
	Cache *Cache
}

// Date is the report's date: At, or today (UTC) when At is zero.
func (o Options) Date() platform.Date {
	if o.At.IsZero() {
		return platform.DateOf(time.Now())
	}
	return o.At
}

// Cache is what Check reads that does not change within a run: each base
// repository's tag list and each revision's created date. A command that
// reports on many images (imgctl patch) shares one, so that each is read
// once per run, not once per image. It is safe for concurrent use.
type Cache struct {
	tags tagLister
	mu   sync.Mutex
	revs map[string]*revisionRead
}

// revisionRead is one revision's read, done once.
type revisionRead struct {
	once sync.Once
	rev  Revision
	err  error
}

// NewCache returns an empty cache that reads through rc (nil means
// registry.New()).
func NewCache(rc *registry.Client) *Cache {
	return &Cache{tags: tagLister{rc: registry.Or(rc), lists: map[string]*tagList{}}, revs: map[string]*revisionRead{}}
}

// revision reads rt once per repository, platform and build (see
// reader.revision); a read whose context ended is not kept.
func (c *Cache) revision(ctx context.Context, r reader, repo name.Repository, rt revisionTag, want platform.Platform) (Revision, error) {
	// The read depends on the build, not on the variant's own revision.
	b, _ := platform.Build(want.OSVersion)
	n := platform.Normalize(want)
	key := fmt.Sprintf("%s:%s@%s/%s/%s:%d", repo, rt.tag, n.OS, n.Architecture, n.Variant, b)
	c.mu.Lock()
	rr := c.revs[key]
	if rr == nil {
		rr = &revisionRead{}
		c.revs[key] = rr
	}
	c.mu.Unlock()
	rr.once.Do(func() { rr.rev, rr.err = r.revision(ctx, repo, rt, want) })
	if isContextErr(rr.err) {
		c.mu.Lock()
		if c.revs[key] == rr {
			delete(c.revs, key)
		}
		c.mu.Unlock()
		if ctx.Err() == nil {
			return r.revision(ctx, repo, rt, want)
		}
		return Revision{}, ctx.Err()
	}
	return rr.rev, rr.err
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
	at := o.Date()
	rep := &Report{At: at, Variants: make([]Variant, len(subjects))}
	c := o.Cache
	if c == nil {
		c = NewCache(rc)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(rc.Jobs())
	for i, s := range subjects {
		g.Go(func() error {
			rep.Variants[i] = check(gctx, reader{rc: rc}, c, s, at)
			return gctx.Err()
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return rep, ctx.Err()
}

// check reports on one subject.
func check(ctx context.Context, r reader, c *Cache, s Subject, at platform.Date) Variant {
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
	list, err := c.tags.list(ctx, repo)
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
	read, err := readRevisions(ctx, r, c, repo, revs[own:], s.Platform)
	if err != nil {
		v.unknown(err.Error())
		return v
	}
	v.assess(read[0], read[1:], at)
	return v
}

// readRevisions reads the revisions one after another; the variants are
// what runs concurrently.
func readRevisions(ctx context.Context, r reader, c *Cache, repo name.Repository, revs []revisionTag, want platform.Platform) ([]Revision, error) {
	out := make([]Revision, len(revs))
	for i, rt := range revs {
		rev, err := c.revision(ctx, r, repo, rt, want)
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
	if isContextErr(tl.err) {
		// The reading Check's context ended (or the client's deadline
		// passed): forget the list, so that a later Check reads it, and
		// read once more, outside the cache, for a caller whose context
		// has not ended.
		l.mu.Lock()
		if l.lists[repo.String()] == tl {
			delete(l.lists, repo.String())
		}
		l.mu.Unlock()
		if ctx.Err() == nil {
			return l.rc.ListTags(ctx, repo)
		}
		return nil, ctx.Err()
	}
	return tl.tags, tl.err
}

// isContextErr reports whether err is a cancelled or expired context's,
// which is the reading caller's and not the registry's answer.
func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
