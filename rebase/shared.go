package rebase

import (
	"sync"
	"sync/atomic"

	"github.com/google/go-containerregistry/pkg/name"
)

// Shared is what several Check and Rebase calls of one run share: the
// base lookups. Each base reference is resolved once per run and each
// base manifest and config read once, however many images name the base
// (imgctl patch rebases a fleet with one Shared). Only reads outside the
// source's and the target's repository are shared, so that a long run
// holds the bases, not every image it has seen. A Shared is safe for
// concurrent use; the zero value is not: use NewShared.
type Shared struct {
	mu      sync.Mutex
	memo    map[string]*memoEntry
	configs atomic.Int64
	lookups atomic.Int64
}

// NewShared returns an empty Shared for one run.
func NewShared() *Shared { return &Shared{memo: map[string]*memoEntry{}} }

// ConfigReads returns how many base configs were read through s.
func (s *Shared) ConfigReads() int64 { return s.configs.Load() }

// ManifestReads returns how many base manifests (by tag or digest) were
// read through s.
func (s *Shared) ManifestReads() int64 { return s.lookups.Load() }

// entry returns the memo entry of key, made on first use.
func (s *Shared) entry(key string) *memoEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.memo[key]
	if !ok {
		e = &memoEntry{}
		s.memo[key] = e
	}
	return e
}

// shared returns the run's Shared when repo is a base's (neither the
// source's nor the target's repository), else nil.
func (s *session) shared(repo name.Repository) *Shared {
	if s.o.Shared == nil || repo.Name() == s.srcRepo.Name() || (s.target != nil && repo.Name() == s.target.Name()) {
		return nil
	}
	return s.o.Shared
}
