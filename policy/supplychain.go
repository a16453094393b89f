package policy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/findings"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/sign"
	"github.com/imgctl/imgctl/snapshot"
	"github.com/imgctl/imgctl/verify"
)

// SupplyChain is one entry of a policy's supplyChain section: what the
// images of some platforms must carry. See the package documentation.
type SupplyChain struct {
	// Platforms select the images: "*", "os/*", "*/arch" or a platform.
	Platforms []string `yaml:"platforms"`
	// Keys are paths of cosign public keys, relative to the policy file,
	// each of which must verify a signature of every selected image with
	// signed: all; by default (signed: reference) of the digest the
	// reference names, when the entry selects any image of it.
	Keys []string `yaml:"keys"`
	// Provenance requires a SLSA provenance attestation of each image.
	Provenance bool `yaml:"provenance"`
	// Builders, with Provenance, are the trusted origins of provenance.
	Builders []Builder `yaml:"builders"`
	// SBOM requires an SBOM attestation of each image.
	SBOM bool `yaml:"sbom"`
}

// Builder is a trusted origin of provenance: an exact value or a pattern
// with "*" for the builder id, the build type, or both.
type Builder struct {
	BuilderID string `yaml:"builderId"`
	BuildType string `yaml:"buildType"`
}

func (sc SupplyChain) validate() error {
	var errs []error
	if len(sc.Platforms) == 0 {
		errs = append(errs, errors.New("platforms: name at least one (\"*\" for every image)"))
	}
	for _, s := range sc.Platforms {
		if _, err := verify.ParsePlatformPattern(s); err != nil {
			errs = append(errs, fmt.Errorf("platforms: %w", err))
		}
	}
	for _, k := range sc.Keys {
		if k == "" {
			errs = append(errs, errors.New("keys: empty path"))
		}
	}
	if len(sc.Builders) > 0 && !sc.Provenance {
		errs = append(errs, errors.New("builders: they apply to provenance; set provenance: true"))
	}
	for i, b := range sc.Builders {
		if b.BuilderID == "" && b.BuildType == "" {
			errs = append(errs, fmt.Errorf("builders[%d]: set builderId, buildType or both", i))
		}
	}
	if len(sc.Keys) == 0 && !sc.Provenance && !sc.SBOM {
		errs = append(errs, errors.New("requires nothing: set keys, provenance or sbom"))
	}
	return errors.Join(errs...)
}

// Requirement is a supply-chain entry of a Gate, resolved: its platform
// patterns and attestation rules, and its keys loaded.
type Requirement struct {
	verify.AttestationRequirement
	Keys []sign.Key
}

// requirement resolves a validated entry; key paths are relative to dir.
func (sc SupplyChain) requirement(p *Policy) (Requirement, error) {
	r := Requirement{AttestationRequirement: verify.AttestationRequirement{Provenance: sc.Provenance, SBOM: sc.SBOM}}
	for _, s := range sc.Platforms {
		pp, err := verify.ParsePlatformPattern(s)
		if err != nil {
			return r, fmt.Errorf("%w: supplyChain: platforms: %w", ErrInvalidPolicy, err)
		}
		r.Platforms = append(r.Platforms, pp)
	}
	for _, b := range sc.Builders {
		r.Builders = append(r.Builders, verify.Builder{ID: b.BuilderID, BuildType: b.BuildType})
	}
	for _, path := range p.paths(sc.Keys) {
		k, err := sign.LoadPublicKeyFile(path)
		if err != nil {
			return r, err
		}
		r.Keys = append(r.Keys, k)
	}
	return r, nil
}

// supplyChain checks the gate's per-platform requirements of s in repo:
// the signatures by each entry's keys of the selected images with
// ScopeAll, else of the reference's digest when the entry selects any
// image (a key the gate already requires is not checked twice), then
// their attestations, read only when an entry requires them of an image
// of s.
func (g *Gate) supplyChain(ctx context.Context, repo name.Repository, s *snapshot.Snapshot, checked map[v1.Hash]bool) ([]findings.Finding, error) {
	var out []findings.Finding
	for _, r := range g.SupplyChain {
		keys := slices.DeleteFunc(slices.Clone(r.Keys), func(k sign.Key) bool {
			return slices.ContainsFunc(g.Keys, func(gk sign.Key) bool { return gk.Name == k.Name })
		})
		subjects := coveredSubjects(s, r)
		if g.Signed != sign.ScopeAll && len(subjects) > 0 {
			// The signature on the reference's digest covers the
			// images it names by digest.
			subjects = sign.SubjectsIn(s, sign.ScopeReference)
		}
		fs, err := sign.Verify(ctx, repo, subjects, keys, sign.VerifyOptions{Registry: g.Registry, Concurrency: g.Concurrency})
		if err != nil {
			return nil, err
		}
		if len(keys) > 0 {
			for _, sub := range subjects {
				checked[sub.Digest] = true
			}
		}
		out = appendNew(out, fs...)
	}
	reqs := make([]verify.AttestationRequirement, len(g.SupplyChain))
	for i, r := range g.SupplyChain {
		reqs[i] = r.AttestationRequirement
	}
	digests := verify.AttestedImages(s, reqs)
	if len(digests) == 0 {
		return out, nil
	}
	atts, err := snapshot.LoadAttestations(ctx, s, digests, g.reader(registry.Or(g.Registry), repo), g.Concurrency)
	if err != nil {
		return nil, fmt.Errorf("reading the attestations of %s: %w", repo.Digest(s.Digest.String()), err)
	}
	return append(out, verify.EvaluateAttestations(s, atts, reqs)...), nil
}

// coveredSubjects returns the images of s whose platform r covers, as
// sign.Verify subjects.
func coveredSubjects(s *snapshot.Snapshot, r Requirement) []sign.Subject {
	var out []sign.Subject
	for i := range s.Entries {
		e := &s.Entries[i]
		p := e.Platform()
		if e.Manifest == nil || e.IsAttestation() || !r.Covers(p) ||
			slices.ContainsFunc(out, func(sub sign.Subject) bool { return sub.Digest == e.Descriptor.Digest }) {
			continue
		}
		out = append(out, sign.Subject{Digest: e.Descriptor.Digest, Platform: p})
	}
	return out
}

// appendNew appends the findings of fs that out does not hold yet: two
// entries may cover one image with one key.
func appendNew(out []findings.Finding, fs ...findings.Finding) []findings.Finding {
	for _, f := range fs {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// reader returns the reader of repo's attestations through rc, with the
// gate's cache: manifests and statements are content-addressed, so what
// the gate read at promote's source serves promote's copy of the earlier
// attestations there.
func (g *Gate) reader(rc *registry.Client, repo name.Repository) cachedReader {
	if g.cache == nil {
		g.cache = &attestationCache{m: map[string][]byte{}}
	}
	return cachedReader{attestationReader: attestationReader{rc: rc, repo: repo}, cache: g.cache}
}

// attestationCache holds attestation manifests and statements read, by
// repository and digest.
type attestationCache struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (c *attestationCache) get(repo name.Repository, kind string, d v1.Hash) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.m[repo.Name()+kind+d.String()]
	return b, ok
}

func (c *attestationCache) put(repo name.Repository, kind string, d v1.Hash, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[repo.Name()+kind+d.String()] = b
}

// cachedReader reads through the cache; a manifest the registry does not
// have is not cached.
type cachedReader struct {
	attestationReader
	cache *attestationCache
}

// Manifest returns a cached manifest, or reads and caches it.
func (r cachedReader) Manifest(ctx context.Context, d v1.Hash) ([]byte, error) {
	return r.cached(ctx, "@", d, r.attestationReader.Manifest)
}

// Blob returns a cached statement, or reads and caches it.
func (r cachedReader) Blob(ctx context.Context, d v1.Hash) ([]byte, error) {
	return r.cached(ctx, "#", d, r.attestationReader.Blob)
}

func (r cachedReader) cached(ctx context.Context, kind string, d v1.Hash, read func(context.Context, v1.Hash) ([]byte, error)) ([]byte, error) {
	if b, ok := r.cache.get(r.repo, kind, d); ok {
		return b, nil
	}
	b, err := read(ctx, d)
	if err == nil && b != nil {
		r.cache.put(r.repo, kind, d, b)
	}
	return b, err
}

// attestationReader reads attestation manifests and statements of one
// repository through the run's registry client.
type attestationReader struct {
	rc   *registry.Client
	repo name.Repository
}

// Manifest reads a manifest by digest (one GET); nil when the registry
// says it does not have it.
func (r attestationReader) Manifest(ctx context.Context, d v1.Hash) ([]byte, error) {
	desc, err := r.rc.Get(ctx, r.repo.Digest(d.String()))
	if registry.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return desc.Manifest, nil
}

// Blob reads a statement by digest (one GET, size-limited).
func (r attestationReader) Blob(ctx context.Context, d v1.Hash) ([]byte, error) {
	return r.rc.SmallBlob(ctx, r.repo.Digest(d.String()))
}
