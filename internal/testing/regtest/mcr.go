package regtest

import (
	"fmt"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// TagPusher pushes an image or index under a tag of a repository path:
// Registry's PushTag, and disttest.Registry's.
type TagPusher interface {
	PushTag(s string, x any, opts ...remote.Option) (name.Reference, v1.Hash, error)
}

// MCRRevision is one published revision of a Windows base build.
type MCRRevision struct {
	// OSVersion is 10.0.BUILD.REV.
	OSVersion string
	// Created is the base config's created: MCR builds a month's base some
	// days before its Patch Tuesday.
	Created time.Time
}

// MCRRevisions returns a build's revisions as MCR publishes them: one per
// month for months months up to and including last's (each created
// lead days before that month's Patch Tuesday, the second Tuesday), the
// revision growing by step, plus an out-of-band revision oobDays after the
// Patch Tuesday of oobMonth (0 for none).
func MCRRevisions(build uint32, first uint32, last time.Time, months, lead, step int, oobMonth time.Time, oobDays int) []MCRRevision {
	var out []MCRRevision
	rev := first
	start := time.Date(last.Year(), last.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, 1-months, 0)
	for i := range months {
		m := start.AddDate(0, i, 0)
		pt := secondTuesday(m)
		out = append(out, MCRRevision{OSVersion: fmt.Sprintf("10.0.%d.%d", build, rev), Created: pt.AddDate(0, 0, -lead).Add(18 * time.Hour)})
		rev += uint32(step)
		if !oobMonth.IsZero() && m.Year() == oobMonth.Year() && m.Month() == oobMonth.Month() {
			out = append(out, MCRRevision{OSVersion: fmt.Sprintf("10.0.%d.%d", build, rev-uint32(step)+5), Created: pt.AddDate(0, 0, oobDays).Add(18 * time.Hour)})
		}
	}
	return out
}

// secondTuesday is the Patch Tuesday of t's month. It is computed here
// rather than with platform.PatchTuesday so that the fixture does not
// take its dates from the code under test.
func secondTuesday(t time.Time) time.Time {
	d := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	tuesdays := 0
	for {
		if d.Weekday() == time.Tuesday {
			if tuesdays++; tuesdays == 2 {
				return d
			}
		}
		d = d.AddDate(0, 0, 1)
	}
}

// MCRBase is what PushMCRBase pushed: each revision's index digest (what
// BuildKit records as a variant's base.digest) by os.version, and its
// image.
type MCRBase struct {
	Repo    string
	Indexes map[string]v1.Hash
	Images  map[string]v1.Image
}

// PushMCRBase pushes a Windows base repository laid out like
// mcr.microsoft.com/windows/nanoserver: for every revision an index with
// the windows/amd64 image (WindowsBaseImage with the revision's created)
// under 10.0.BUILD.REV and the image itself under its -amd64 twin; and,
// for each moving tag (ltsc2022 → build 20348), the newest revision of its
// build under the tag and its -amd64 twin. The revisions are pushed in
// the order given.
func PushMCRBase(p TagPusher, repo string, moving map[string]uint32, revs ...[]MCRRevision) (*MCRBase, error) {
	b := &MCRBase{Repo: repo, Indexes: map[string]v1.Hash{}, Images: map[string]v1.Image{}}
	newest := map[uint32]MCRRevision{}
	for _, list := range revs {
		for _, r := range list {
			if err := b.push(p, r, r.OSVersion); err != nil {
				return nil, err
			}
			var build, rev uint32
			fmt.Sscanf(r.OSVersion, "10.0.%d.%d", &build, &rev)
			var cur uint32
			fmt.Sscanf(newest[build].OSVersion, "10.0.%d.%d", new(uint32), &cur)
			if rev > cur {
				newest[build] = r
			}
		}
	}
	for tag, build := range moving {
		r, ok := newest[build]
		if !ok {
			return nil, fmt.Errorf("moving tag %s: no revision of build %d", tag, build)
		}
		if err := b.push(p, r, tag); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// push pushes revision r's index under tag and its image under tag-amd64.
func (b *MCRBase) push(p TagPusher, r MCRRevision, tag string) error {
	img := b.Images[r.OSVersion]
	if img == nil {
		base, err := WindowsBaseImage(r.OSVersion)
		if err != nil {
			return err
		}
		if img, err = mutate.CreatedAt(base, v1.Time{Time: r.Created}); err != nil {
			return err
		}
		b.Images[r.OSVersion] = img
	}
	idx, err := Index(Entry{Image: img})
	if err != nil {
		return err
	}
	if _, _, err := p.PushTag(b.Repo+":"+tag+"-amd64", img); err != nil {
		return fmt.Errorf("pushing %s:%s-amd64: %w", b.Repo, tag, err)
	}
	_, d, err := p.PushTag(b.Repo+":"+tag, idx)
	if err != nil {
		return fmt.Errorf("pushing %s:%s: %w", b.Repo, tag, err)
	}
	b.Indexes[r.OSVersion] = d
	return nil
}
