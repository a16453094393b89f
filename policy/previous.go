package policy

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/snapshot"
)

// previousAttestations returns the attestation manifests outside s's index
// that its provenance names as predecessors (snapshot.Statement.Previous:
// imgctl rebase keeps a variant's old attestation manifests in the
// repository by digest and lists them in the new provenance), and theirs in
// turn, as read from repo: what promote copies besides the index so that
// the provenance chain still resolves at the destination. An index without
// attestation manifests costs no request; one with them costs a GET of
// each and of each provenance statement not read yet (see Gate.reader). A
// predecessor repo does not have is an error: promoting would publish a
// chain that does not resolve.
func (g *Gate) previousAttestations(ctx context.Context, rc *registry.Client, repo name.Repository, s *snapshot.Snapshot) ([]*remote.Descriptor, error) {
	seen := map[v1.Hash]bool{}
	has := false
	for _, e := range s.Entries {
		seen[e.Descriptor.Digest] = true
		has = has || e.IsAttestation()
	}
	if !has {
		return nil, nil
	}
	rd := g.reader(rc, repo)
	atts, err := snapshot.LoadAttestations(ctx, s, nil, rd, g.Concurrency)
	if err != nil {
		return nil, fmt.Errorf("reading the attestations of %s: %w", repo.Digest(s.Digest.String()), err)
	}
	type pending struct{ digest, by v1.Hash }
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
	var out []*remote.Descriptor
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if seen[p.digest] {
			continue
		}
		seen[p.digest] = true
		ref := repo.Digest(p.digest.String())
		desc, err := rc.Get(ctx, ref)
		if err != nil {
			return nil, fmt.Errorf("the provenance in attestation manifest %s names its predecessor %s: %w", p.by, ref, err)
		}
		out = append(out, desc)
		rd.cache.put(repo, "@", p.digest, desc.Manifest)
		a, err := snapshot.ReadAttestation(ctx, desc.Descriptor, v1.Hash{}, rd, g.Concurrency)
		if err != nil {
			return nil, err
		}
		enqueue(*a)
	}
	return out, nil
}
