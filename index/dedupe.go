package index

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/imgctl/imgctl/platform"
)

// dedupe drops repeats of the same manifest with the same platform, then
// refuses or resolves groups of different manifests with one platform.Key.
func (s *session) dedupe(images []*Entry) ([]*Entry, error) {
	var order []string
	groups := map[string][]*Entry{}
	seen := map[string]bool{}
	for _, e := range images {
		key := "digest:" + e.Descriptor.Digest.String()
		if p := e.Descriptor.Platform; p != nil {
			key = platform.Key(*p)
		}
		id := key + "|" + e.Descriptor.Digest.String()
		if seen[id] {
			s.log.Debug("same manifest given twice", "entry", e.String())
			continue
		}
		seen[id] = true
		if _, ok := groups[key]; !ok {
			order = append(order, key)
		}
		groups[key] = append(groups[key], e)
	}
	var kept []*Entry
	var dups []string
	for _, key := range order {
		g := groups[key]
		if len(g) == 1 {
			kept = append(kept, g[0])
			continue
		}
		if s.o.Prefer != PreferNewest {
			dups = append(dups, describeGroup(key, g))
			continue
		}
		best, err := s.newest(g)
		if err != nil {
			return nil, err
		}
		kept = append(kept, best)
		for _, e := range g {
			if e != best {
				s.note("dropped %s: the newest, %s, was kept", e, best.Descriptor.Digest)
			}
		}
	}
	if len(dups) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrDuplicatePlatform, strings.Join(dups, "; "))
	}
	return kept, nil
}

func describeGroup(key string, g []*Entry) string {
	parts := make([]string, len(g))
	for i, e := range g {
		parts[i] = fmt.Sprintf("%s from %s", e.Descriptor.Digest, e.From)
	}
	return key + " in " + strings.Join(parts, " and ")
}

// newest picks the newest entry of a duplicate group.
func (s *session) newest(g []*Entry) (*Entry, error) {
	best := g[0]
	for _, e := range g[1:] {
		c, err := s.compareAge(e, best)
		if err != nil {
			return nil, err
		}
		if c > 0 {
			best = e
		}
	}
	return best, nil
}

// compareAge orders by Windows os.version (platform.CompareNewestFirst),
// then config created (read on demand), then source position; greater is
// newer.
func (s *session) compareAge(a, b *Entry) (int, error) {
	if a.isWindows() && b.isWindows() {
		if c := platform.CompareNewestFirst(a.Descriptor.Platform.OSVersion, b.Descriptor.Platform.OSVersion); c != 0 {
			return -c, nil
		}
	}
	for _, e := range []*Entry{a, b} {
		if e.Created.IsZero() && e.Descriptor.MediaType.IsImage() {
			if _, err := e.config(); err != nil {
				return 0, err
			}
		}
	}
	if c := a.Created.Compare(b.Created); c != 0 {
		return c, nil
	}
	pa, pb := a.position(), b.position()
	return cmp.Or(cmp.Compare(pa[0], pb[0]), cmp.Compare(pa[1], pb[1])), nil
}
