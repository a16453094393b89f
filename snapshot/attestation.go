package snapshot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	slsa02 "github.com/in-toto/in-toto-golang/in_toto/slsa_provenance/v0.2"
	slsa1 "github.com/in-toto/in-toto-golang/in_toto/slsa_provenance/v1"
	"golang.org/x/sync/errgroup"
)

// More predicate types imgctl recognises (see also the attestation
// constants in annotations.go).
const (
	// PredicateSLSAProvenanceV02 is SLSA provenance v0.2, BuildKit's
	// default (builder.id, buildType).
	PredicateSLSAProvenanceV02 = slsa02.PredicateSLSAProvenance
	// PredicateCycloneDX is the predicate type of a CycloneDX SBOM.
	PredicateCycloneDX = "https://cyclonedx.org/bom"
)

// IsProvenance reports whether a predicate type is SLSA provenance.
func IsProvenance(predicateType string) bool {
	return predicateType == PredicateSLSAProvenanceV02 || predicateType == PredicateSLSAProvenanceV1
}

// IsSBOM reports whether a predicate type is an SBOM.
func IsSBOM(predicateType string) bool {
	return predicateType == PredicateSPDX || predicateType == PredicateCycloneDX
}

// Statement is what imgctl reads of one in-toto statement.
type Statement struct {
	// PredicateType is the statement's (or, for a layer not read, its
	// annotation's).
	PredicateType string
	// Subjects are the sha256 digests the statement describes; nil when
	// the layer was not read (see LoadAttestations).
	Subjects []v1.Hash
	// Read is false for a layer recognised by its annotation alone.
	Read bool
	// BuilderID and BuildType are the provenance's: builder.id and
	// buildType in SLSA v0.2, runDetails.builder.id and
	// buildDefinition.buildType in v1.
	BuilderID, BuildType string
	// Previous are the attestation manifests a SLSA v1 provenance lists
	// as resolvedDependencies named AttestationManifest: those of the
	// image it was made from, which imgctl rebase names where the source
	// index keeps them, outside the new index.
	Previous []Dependency
}

// Dependency is a resolvedDependency of a provenance: its package URL
// (pkg:docker/...@sha256:..., as BuildKit and imgctl rebase write them; ""
// when it has none) and its sha256 digest.
type Dependency struct {
	URI    string
	Digest v1.Hash
}

// Describes reports whether the statement names h as a subject. A
// statement that was not read, or that names no sha256 subject (BuildKit
// writes none for an image exported without a name), describes what its
// manifest is attached to.
func (s Statement) Describes(h v1.Hash) bool {
	return !s.Read || len(s.Subjects) == 0 || slices.Contains(s.Subjects, h)
}

// statementHeader is the part of an in-toto statement (v0.1 and v1) that
// is not the predicate. It is declared here rather than taken from
// in-toto-golang's in_toto package, which links that library's signing
// and verification code for four fields.
type statementHeader struct {
	Type          string `json:"_type"`
	PredicateType string `json:"predicateType"`
	Subject       []struct {
		Name   string            `json:"name"`
		Digest map[string]string `json:"digest"`
	} `json:"subject"`
	Predicate json.RawMessage `json:"predicate"`
}

// ErrInvalidStatement is returned for an attestation layer that is not an
// in-toto statement imgctl can read.
var ErrInvalidStatement = errors.New("invalid in-toto statement")

// ParseStatement reads an in-toto statement and, for SLSA provenance v0.2
// and v1, its builder id and build type (with in-toto-golang's predicate
// types).
func ParseStatement(b []byte) (Statement, error) {
	var h statementHeader
	if err := json.Unmarshal(b, &h); err != nil {
		return Statement{}, fmt.Errorf("%w: %w", ErrInvalidStatement, err)
	}
	if h.PredicateType == "" {
		return Statement{}, fmt.Errorf("%w: no predicateType", ErrInvalidStatement)
	}
	s := Statement{PredicateType: h.PredicateType, Read: true}
	for _, sub := range h.Subject {
		if hex, ok := sub.Digest["sha256"]; ok {
			d, err := v1.NewHash("sha256:" + hex)
			if err != nil {
				return Statement{}, fmt.Errorf("%w: subject %q: %w", ErrInvalidStatement, sub.Name, err)
			}
			s.Subjects = append(s.Subjects, d)
		}
	}
	switch h.PredicateType {
	case PredicateSLSAProvenanceV02:
		var p slsa02.ProvenancePredicate
		if err := json.Unmarshal(h.Predicate, &p); err != nil {
			return Statement{}, fmt.Errorf("%w: SLSA v0.2 predicate: %w", ErrInvalidStatement, err)
		}
		s.BuilderID, s.BuildType = p.Builder.ID, p.BuildType
	case PredicateSLSAProvenanceV1:
		var p slsa1.ProvenancePredicate
		if err := json.Unmarshal(h.Predicate, &p); err != nil {
			return Statement{}, fmt.Errorf("%w: SLSA v1 predicate: %w", ErrInvalidStatement, err)
		}
		s.BuilderID, s.BuildType = p.RunDetails.Builder.ID, p.BuildDefinition.BuildType
		for _, dep := range p.BuildDefinition.ResolvedDependencies {
			if hex, ok := dep.Digest["sha256"]; ok && dep.Name == AttestationManifest {
				d, err := v1.NewHash("sha256:" + hex)
				if err != nil {
					return Statement{}, fmt.Errorf("%w: resolvedDependency %q: %w", ErrInvalidStatement, dep.Name, err)
				}
				s.Previous = append(s.Previous, Dependency{URI: dep.URI, Digest: d})
			}
		}
	}
	return s, nil
}

// Attestation is one attestation manifest of an index and the statements
// in its layers.
type Attestation struct {
	// Descriptor is the manifest's entry in the index.
	Descriptor v1.Descriptor
	// Subject is the manifest it is attached to (the
	// vnd.docker.reference.digest annotation).
	Subject    v1.Hash
	Statements []Statement
	// Absent is true when the repository does not have the manifest the
	// index lists: it then has no statements.
	Absent bool
}

// AttestationReader reads the manifests and blobs of one repository by
// digest; the registry package's client provides it. Manifest returns nil
// and no error for a manifest the registry says it does not have. Blob
// reads are for statements: small, whole, checked against the digest.
type AttestationReader interface {
	Manifest(ctx context.Context, d v1.Hash) ([]byte, error)
	Blob(ctx context.Context, d v1.Hash) ([]byte, error)
}

// LoadAttestations reads the attestation manifests of s attached to one
// of subjects (all when subjects is nil), at most concurrency at a time:
// one manifest read each, then one blob read per provenance statement or
// statement without a predicate-type annotation. An SBOM layer is
// recognised by its annotation and not read: SBOMs run to megabytes, and
// the index's reference annotation already ties it to its subject.
// Attestation manifests whose reference annotation is missing or
// unreadable are skipped (verify reports them as dangling).
func LoadAttestations(ctx context.Context, s *Snapshot, subjects []v1.Hash, r AttestationReader, concurrency int) ([]Attestation, error) {
	if s.Index == nil {
		return nil, nil
	}
	if concurrency <= 0 {
		concurrency = DefaultConcurrency
	}
	var out []Attestation
	for _, e := range s.Entries {
		sub, ok := Subject(e.Descriptor)
		if !e.IsAttestation() || !ok || (subjects != nil && !slices.Contains(subjects, sub)) {
			continue
		}
		out = append(out, Attestation{Descriptor: e.Descriptor, Subject: sub})
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(concurrency)
	for i := range out {
		g.Go(func() error { return out[i].load(gctx, r, concurrency) })
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// ReadAttestation reads one attestation manifest, desc, and its
// statements as LoadAttestations does; subject is what it is attached to.
func ReadAttestation(ctx context.Context, desc v1.Descriptor, subject v1.Hash, r AttestationReader, concurrency int) (*Attestation, error) {
	if concurrency <= 0 {
		concurrency = DefaultConcurrency
	}
	a := &Attestation{Descriptor: desc, Subject: subject}
	if err := a.load(ctx, r, concurrency); err != nil {
		return nil, err
	}
	return a, nil
}

// load reads one attestation manifest and its statements.
func (a *Attestation) load(ctx context.Context, r AttestationReader, concurrency int) error {
	raw, err := r.Manifest(ctx, a.Descriptor.Digest)
	if err != nil {
		return fmt.Errorf("reading attestation manifest %s: %w", a.Descriptor.Digest, err)
	}
	if raw == nil {
		a.Absent = true
		return nil
	}
	if int64(len(raw)) != a.Descriptor.Size {
		return fmt.Errorf("attestation manifest %s: %w: the descriptor says %d bytes, the registry served %d",
			a.Descriptor.Digest, ErrSizeMismatch, a.Descriptor.Size, len(raw))
	}
	m, err := v1.ParseManifest(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("attestation manifest %s: %w", a.Descriptor.Digest, err)
	}
	a.Statements = make([]Statement, len(m.Layers))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(concurrency)
	for i, l := range m.Layers {
		pt := l.Annotations[AnnotationPredicateType]
		if l.MediaType != InTotoMediaType {
			continue // not a statement: the zero Statement
		}
		if IsSBOM(pt) {
			a.Statements[i] = Statement{PredicateType: pt}
			continue
		}
		g.Go(func() error {
			b, err := r.Blob(gctx, l.Digest)
			if err != nil {
				return fmt.Errorf("reading attestation %s: %w", l.Digest, err)
			}
			st, err := ParseStatement(b)
			if err != nil {
				return fmt.Errorf("attestation %s of %s: %w", l.Digest, a.Descriptor.Digest, err)
			}
			a.Statements[i] = st
			return nil
		})
	}
	return g.Wait()
}
