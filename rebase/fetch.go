package rebase

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/imgctl/imgctl/registry"
)

// session is one Check or Rebase: the run's registry client, so that every
// registry is authenticated once, and a memo so that a base shared by
// several variants (or a second look at one manifest) costs one request.
type session struct {
	o   Options
	log *slog.Logger
	rc  *registry.Client
	// target is the repository the rebased index goes to; nil for Check.
	target *name.Repository
	// srcRepo is the source index's repository.
	srcRepo name.Repository

	mu   sync.Mutex
	memo map[string]*memoEntry
}

type memoEntry struct {
	once sync.Once
	val  any
	err  error
}

// newSession declares pull scope on src and push scope on target (none for
// Check) before the first request, so that the registry is authenticated
// once for both; the bases' repositories, known only from the variants'
// annotations, join the token on first use.
func newSession(o Options, src name.Reference, target *name.Tag) *session {
	rc := registry.Or(o.Registry)
	var push []name.Repository
	if target != nil && !o.DryRun {
		push = append(push, target.Context())
	}
	rc.Scope([]name.Repository{src.Context()}, push)
	s := &session{o: o, log: o.logger(), rc: rc, memo: map[string]*memoEntry{}, srcRepo: src.Context()}
	if target != nil {
		repo := target.Context()
		s.target = &repo
	}
	return s
}

// once runs f once per key and returns its result to every caller: once
// per run for a base's repository when the run shares its base lookups
// (Options.Shared), once per call otherwise. counter, when the lookup is
// shared, counts the reads f makes.
func (s *session) once(repo name.Repository, key string, counter func(*Shared) *atomic.Int64, f func() (any, error)) (any, error) {
	var e *memoEntry
	if sh := s.shared(repo); sh != nil {
		e = sh.entry(key)
		inner := f
		f = func() (any, error) { counter(sh).Add(1); return inner() }
	} else {
		s.mu.Lock()
		var ok bool
		if e, ok = s.memo[key]; !ok {
			e = &memoEntry{}
			s.memo[key] = e
		}
		s.mu.Unlock()
	}
	e.once.Do(func() { e.val, e.err = f() })
	return e.val, e.err
}

// get fetches the manifest ref points at (a tag or a digest), once.
func (s *session) get(ctx context.Context, ref name.Reference) (*remote.Descriptor, error) {
	v, err := s.once(ref.Context(), "manifest "+ref.String(), func(sh *Shared) *atomic.Int64 { return &sh.lookups }, func() (any, error) {
		d, err := s.rc.Get(ctx, ref)
		if err != nil {
			return nil, err
		}
		s.log.Debug("fetched manifest", "ref", ref.String(), "digest", d.Digest.String(), "mediaType", string(d.MediaType))
		return d, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*remote.Descriptor), nil
}

// image is an image manifest read from a repository.
type image struct {
	repo     name.Repository
	desc     v1.Descriptor // media type, digest and size of raw
	raw      []byte
	manifest *v1.Manifest
}

// image fetches and parses the image manifest repo@d.
func (s *session) image(ctx context.Context, repo name.Repository, d v1.Hash) (*image, error) {
	rd, err := s.get(ctx, repo.Digest(d.String()))
	if err != nil {
		return nil, err
	}
	return asImage(repo, rd)
}

func asImage(repo name.Repository, rd *remote.Descriptor) (*image, error) {
	if !rd.MediaType.IsImage() {
		return nil, fmt.Errorf("%s@%s: %w %q", repo, rd.Digest, ErrMediaType, rd.MediaType)
	}
	m, err := v1.ParseManifest(bytes.NewReader(rd.Manifest))
	if err != nil {
		return nil, fmt.Errorf("parsing manifest %s@%s: %w", repo, rd.Digest, err)
	}
	return &image{repo: repo, desc: rd.Descriptor, raw: rd.Manifest, manifest: m}, nil
}

// config is an image config: its exact bytes and their parse.
type config struct {
	raw  []byte
	file *v1.ConfigFile
}

// config fetches an image's config blob once; configs are small, and the
// only blobs rebase reads.
func (s *session) config(ctx context.Context, img *image) (*config, error) {
	d := img.manifest.Config.Digest
	v, err := s.once(img.repo, "blob "+img.repo.Digest(d.String()).String(), func(sh *Shared) *atomic.Int64 { return &sh.configs }, func() (any, error) {
		raw, err := s.rc.SmallBlob(ctx, img.repo.Digest(d.String()))
		if err != nil {
			return nil, err
		}
		cf, err := v1.ParseConfigFile(bytes.NewReader(raw))
		if err != nil {
			return nil, err
		}
		return &config{raw: raw, file: cf}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading config %s of %s@%s: %w", d, img.repo, img.desc.Digest, err)
	}
	return v.(*config), nil
}
