package patchlevel

import (
	"cmp"
	"context"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/snapshot"
)

// SubjectsOf returns the Windows images of a snapshot (attestations and
// nested indexes aside) as subjects: each with its platform and the base
// its org.opencontainers.image.base.name annotation names (the manifest's,
// else its index descriptor's), parsed with opts. A missing or unreadable
// base name leaves Base nil, which Check reports.
func SubjectsOf(s *snapshot.Snapshot, opts ...name.Option) []Subject {
	var out []Subject
	for i := range s.Entries {
		e := &s.Entries[i]
		p := e.Platform()
		if e.Manifest == nil || e.IsAttestation() || p == nil || platform.Normalize(*p).OS != "windows" {
			continue
		}
		sub := Subject{Platform: *p, Digest: e.Descriptor.Digest.String()}
		n := cmp.Or(e.Manifest.Annotations[snapshot.AnnotationBaseName], e.Descriptor.Annotations[snapshot.AnnotationBaseName])
		if ref, err := name.ParseReference(n, opts...); n != "" && err == nil {
			sub.Base = ref
		}
		out = append(out, sub)
	}
	return out
}

// SubjectOf is the subject of one variant as `imgctl bases` and the fleet
// hold it (its platform as text, its manifest digest and its base's name,
// parsed with opts); false when the platform is not Windows or cannot be
// read. An unreadable base name leaves Base nil, which Check reports.
func SubjectOf(plat, digest, base string, opts ...name.Option) (Subject, bool) {
	p, err := platform.Parse(plat)
	if err != nil || platform.Normalize(p).OS != "windows" {
		return Subject{}, false
	}
	s := Subject{Platform: p, Digest: digest}
	if ref, err := name.ParseReference(base, opts...); base != "" && err == nil {
		s.Base = ref
	}
	return s, true
}

// Ref names one variant as `imgctl bases` and the fleet hold it: its
// platform as text, its manifest digest and its base's name.
type Ref struct {
	Platform, Digest, Base string
}

// CheckRefs reports on the Windows variants among refs (see SubjectOf
// and Check, base names parsed with opts): the result has one entry per
// ref, nil for one that is not Windows.
func CheckRefs(ctx context.Context, refs []Ref, o Options, opts ...name.Option) ([]*Variant, error) {
	var subjects []Subject
	var where []int
	for i, r := range refs {
		if s, ok := SubjectOf(r.Platform, r.Digest, r.Base, opts...); ok {
			subjects, where = append(subjects, s), append(where, i)
		}
	}
	out := make([]*Variant, len(refs))
	if len(subjects) == 0 {
		return out, ctx.Err()
	}
	o.At = o.Date() // one date for every variant, also past midnight
	rep, err := Check(ctx, subjects, o)
	if err != nil {
		return nil, err
	}
	for j, i := range where {
		out[i] = &rep.Variants[j]
	}
	return out, nil
}
