package rebase

import (
	"slices"
	"strconv"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/snapshot"
)

// snapEntry is what the new index holds for a variant.
type snapEntry struct {
	manifest *v1.Manifest
	config   *v1.ConfigFile
}

// Snapshot returns what verify needs of the new index without reading it
// back: the index and, for each variant, the manifest and config whose
// exact bytes were just pushed. It is nil when nothing was planned.
func (r *Result) Snapshot() *snapshot.Snapshot {
	if r.Index == nil {
		return nil
	}
	s := &snapshot.Snapshot{Digest: r.Index.Digest, Index: r.Index.Manifest}
	for _, d := range r.Index.Manifest.Manifests {
		e := snapshot.Entry{Descriptor: d}
		if se, ok := r.entries[d.Digest]; ok {
			e.Manifest, e.Config = se.manifest, se.config
		}
		s.Entries = append(s.Entries, e)
	}
	return s
}

// Targets returns the Windows builds of the new index's variants, the
// nodes a rebased index must still serve, for verify.Options.Targets.
func (r *Result) Targets() []platform.Target {
	var builds []uint32
	for _, v := range r.Variants {
		p, err := platform.Parse(v.Platform)
		if err != nil || p.OS != "windows" {
			continue
		}
		osv := p.OSVersion
		if se, ok := r.entries[hashOf(v.NewDigest)]; ok && v.NewDigest != "" {
			osv = se.config.OSVersion
		}
		if b, ok := platform.Build(osv); ok && !slices.Contains(builds, b) {
			builds = append(builds, b)
		}
	}
	slices.Sort(builds)
	var out []platform.Target
	for _, b := range builds {
		if t, err := platform.ParseTarget(strconv.FormatUint(uint64(b), 10)); err == nil {
			out = append(out, t)
		}
	}
	return out
}

func hashOf(s string) v1.Hash {
	h, _ := v1.NewHash(s)
	return h
}
