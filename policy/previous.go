package policy

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/moby/buildkit/util/purl"

	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/snapshot"
)

// Predecessor is an attestation manifest outside an index that its
// provenance names, as read from the repository that holds it.
type Predecessor struct {
	// Repo is the repository that holds it; Desc the manifest read there.
	Repo name.Repository
	Desc *remote.Descriptor
}

// Predecessors returns the attestation manifests outside s's index
// that its provenance names as predecessors (snapshot.Statement.Previous:
// imgctl rebase names a variant's old attestation manifests where the
// source index keeps them), and theirs in turn: what promote copies besides
// the index so that the provenance chain still resolves at the
// destination. Each is read from the repository its package URL names, or
// from repo when it names none. An index without attestation manifests
// costs no request; one with them costs a GET of each and of each
// provenance statement not read yet (see Gate.reader), and a repository
// named only there may cost a token request. A predecessor that cannot be
// read is an error: promoting would publish a chain that does not resolve.
func (g *Gate) Predecessors(ctx context.Context, rc *registry.Client, repo name.Repository, s *snapshot.Snapshot) ([]Predecessor, error) {
	seen := map[v1.Hash]bool{}
	has := false
	for _, e := range s.Entries {
		seen[e.Descriptor.Digest] = true
		has = has || e.IsAttestation()
	}
	if !has {
		return nil, nil
	}
	atts, err := snapshot.LoadAttestations(ctx, s, nil, g.reader(rc, repo), g.Concurrency)
	if err != nil {
		return nil, fmt.Errorf("reading the attestations of %s: %w", repo.Digest(s.Digest.String()), err)
	}
	type pending struct {
		dep snapshot.Dependency
		by  v1.Hash
	}
	var queue []pending
	enqueue := func(a snapshot.Attestation) {
		for _, st := range a.Statements {
			for _, d := range st.Previous {
				queue = append(queue, pending{d, a.Descriptor.Digest})
			}
		}
	}
	for _, a := range atts {
		enqueue(a)
	}
	var out []Predecessor
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if seen[p.dep.Digest] {
			continue
		}
		seen[p.dep.Digest] = true
		from, err := dependencyRepo(rc, p.dep, repo)
		if err != nil {
			return nil, fmt.Errorf("the provenance in attestation manifest %s names its predecessor %s: %w", p.by, p.dep.URI, err)
		}
		ref := from.Digest(p.dep.Digest.String())
		desc, err := rc.Get(ctx, ref)
		if err != nil {
			return nil, fmt.Errorf("the provenance in attestation manifest %s names its predecessor %s: %w", p.by, ref, err)
		}
		out = append(out, Predecessor{Repo: from, Desc: desc})
		rd := g.reader(rc, from)
		rd.cache.put(from, "@", p.dep.Digest, desc.Manifest)
		a, err := snapshot.ReadAttestation(ctx, desc.Descriptor, v1.Hash{}, rd, g.Concurrency)
		if err != nil {
			return nil, err
		}
		enqueue(*a)
	}
	return out, nil
}

// dependencyRepo returns the repository a dependency's package URL names
// (with BuildKit's own purl parser, which wrote it), or def when it has
// none.
func dependencyRepo(rc *registry.Client, dep snapshot.Dependency, def name.Repository) (name.Repository, error) {
	if dep.URI == "" {
		return def, nil
	}
	s, _, err := purl.PURLToRef(dep.URI)
	if err != nil {
		return name.Repository{}, err
	}
	ref, err := rc.ParseReference(s)
	if err != nil {
		return name.Repository{}, err
	}
	return ref.Context(), nil
}
