package rebase

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	slsa "github.com/in-toto/attestation/go/predicates/provenance/v1"
	intoto "github.com/in-toto/attestation/go/v1"
	"github.com/moby/buildkit/util/purl"
	specs "github.com/opencontainers/image-spec/specs-go/v1"
	packageurl "github.com/package-url/packageurl-go"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/imgctl/imgctl/snapshot"
)

// BuildType is buildDefinition.buildType of the SLSA provenance v1 that
// Rebase writes for each rebased variant. Such a build is no build: the
// variant's manifest and config were edited to replace the old base's
// layers with the new base's (see the package documentation). Its
// externalParameters are the request (source, target, platform, base
// name); its resolvedDependencies are named by the Dependency constants.
const BuildType = "https://github.com/imgctl/imgctl/rebase/v1"

// DefaultBuilderID is runDetails.builder.id when Options.BuilderID is not
// set: imgctl itself, whose version is builder.version["imgctl"].
const DefaultBuilderID = "https://github.com/imgctl/imgctl"

// Names of the resolvedDependencies of rebase provenance. Each names its
// artifact by a package URL (as BuildKit names bases) and a sha256 digest.
const (
	// DependencySource is the variant's manifest before the rebase; its
	// annotations give the source index ("index") and reference ("ref").
	DependencySource = "source"
	// DependencyOldBase is the old base's image for the variant's platform;
	// the annotation "recorded" is the base.digest the variant recorded (an
	// index digest, or that same image).
	DependencyOldBase = "old-base"
	// DependencyNewBase is the new base's image for the variant's platform;
	// the annotation "index" is what the base reference pointed at.
	DependencyNewBase = "new-base"
	// DependencyAttestation is an attestation manifest of the variant
	// before the rebase (BuildKit's provenance, its SBOM), named in the
	// source repository, where the source index keeps it; it is not in the
	// new index. Its annotations give the predicate types it holds
	// ("predicateTypes") and its subject.
	DependencyAttestation = "attestation-manifest"
)

// run is what every provenance of one Rebase shares.
type run struct {
	// invocation identifies the run by its inputs and outputs (see
	// invocationID), so that the same rebase records the same id.
	invocation string
	src        *source
	target     name.Tag
}

// invocationID is a digest of what makes a rebase this rebase: the source
// index, the target tag, and each rebased variant's old and new manifest.
// A random id (or the wall clock) would make every run's provenance, and
// so the index digest, differ.
func (r *run) invocationID() string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n", r.src.digest, r.target)
	for _, v := range r.src.variants {
		if v.NewDigest != "" {
			fmt.Fprintf(h, "%s %s\n", v.Digest, v.NewDigest)
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// buildTime is what the provenance of v records as its start and finish:
// SourceDateEpoch when set, else the new base image's creation time; nil
// when neither is known.
func buildTime(o *Options, v *variant) *timestamppb.Timestamp {
	switch {
	case o.SourceDateEpoch != nil:
		return timestamppb.New(*o.SourceDateEpoch)
	case !v.newBaseCreated.IsZero():
		return timestamppb.New(v.newBaseCreated)
	}
	return nil
}

// oldAttestation is an attestation manifest of a variant in the source
// index, as read: its descriptor and the predicate types of its layers.
type oldAttestation struct {
	desc  v1.Descriptor
	types []string
}

// statement returns the in-toto v1 statement of SLSA provenance v1 for the
// rebased variant v, whose new manifest is desc, as compact JSON.
func (r *run) statement(o *Options, v *variant, desc v1.Descriptor, olds []oldAttestation) ([]byte, error) {
	plat := desc.Platform
	subject, err := purl.RefToPURL(packageurl.TypeDocker, r.target.String(), specPlatform(plat))
	if err != nil {
		return nil, err
	}
	ext, err := structpb.NewStruct(map[string]any{
		"source":   r.src.ref.String(),
		"target":   r.target.String(),
		"platform": v.Platform,
		"base":     v.BaseName,
	})
	if err != nil {
		return nil, err
	}
	srcRepo := r.src.ref.Context()
	wanted := []depSpec{
		{DependencySource, srcRepo.Digest(v.Digest).String(), v.desc, plat, map[string]any{"index": r.src.digest.String(), "ref": r.src.ref.String()}},
		{DependencyOldBase, v.BaseName, v1.Descriptor{Digest: v.oldChild}, plat, map[string]any{"recorded": v.OldBase}},
		{DependencyNewBase, v.BaseName, v.current.desc, plat, map[string]any{"index": v.current.top.String()}},
	}
	for _, a := range olds {
		types := make([]any, len(a.types))
		for i, t := range a.types {
			types[i] = t
		}
		wanted = append(wanted, depSpec{DependencyAttestation, srcRepo.Digest(a.desc.Digest.String()).String(), a.desc, nil,
			map[string]any{"predicateTypes": types, "subject": v.Digest}})
	}
	deps := make([]*intoto.ResourceDescriptor, len(wanted))
	for i, d := range wanted {
		if deps[i], err = d.resource(); err != nil {
			return nil, fmt.Errorf("variant %s: provenance: %s %s: %w", v.Platform, d.role, d.ref, err)
		}
	}
	pred := &slsa.Provenance{
		BuildDefinition: &slsa.BuildDefinition{
			BuildType:            BuildType,
			ExternalParameters:   ext,
			ResolvedDependencies: deps,
		},
		RunDetails: &slsa.RunDetails{
			Builder: &slsa.Builder{Id: o.builderID(), Version: map[string]string{"imgctl": o.version()}},
			Metadata: &slsa.BuildMetadata{
				InvocationId: r.invocation,
				StartedOn:    buildTime(o, v),
				FinishedOn:   buildTime(o, v),
			},
		},
	}
	if err := pred.Validate(); err != nil {
		return nil, fmt.Errorf("variant %s: provenance: %w", v.Platform, err)
	}
	ps := &structpb.Struct{}
	if err := convert(pred, ps); err != nil {
		return nil, err
	}
	st := &intoto.Statement{
		Type:          intoto.StatementTypeUri,
		Subject:       []*intoto.ResourceDescriptor{{Name: subject, Digest: map[string]string{desc.Digest.Algorithm: desc.Digest.Hex}}},
		PredicateType: snapshot.PredicateSLSAProvenanceV1,
		Predicate:     ps,
	}
	if err := st.Validate(); err != nil {
		return nil, fmt.Errorf("variant %s: provenance statement: %w", v.Platform, err)
	}
	return marshal(st)
}

// depSpec is one resolved dependency to describe: the image d, named by
// ref (a tag, as a base is named, or repo@digest) with the platform.
type depSpec struct {
	role string
	ref  string
	d    v1.Descriptor
	plat *v1.Platform
	ann  map[string]any
}

// resource describes the dependency as BuildKit describes a base: ref as a
// package URL with the platform, and d's digest.
func (d depSpec) resource() (*intoto.ResourceDescriptor, error) {
	u, err := purl.RefToPURL(packageurl.TypeDocker, d.ref, specPlatform(d.plat))
	if err != nil {
		return nil, err
	}
	a, err := structpb.NewStruct(d.ann)
	if err != nil {
		return nil, err
	}
	return &intoto.ResourceDescriptor{
		Name:        d.role,
		Uri:         u,
		Digest:      map[string]string{d.d.Digest.Algorithm: d.d.Digest.Hex},
		MediaType:   string(d.d.MediaType),
		Annotations: a,
	}, nil
}

// specPlatform converts a platform for purl, nil for none.
func specPlatform(p *v1.Platform) *specs.Platform {
	if p == nil {
		return nil
	}
	return &specs.Platform{OS: p.OS, Architecture: p.Architecture, Variant: p.Variant, OSVersion: p.OSVersion, OSFeatures: p.OSFeatures}
}

// convert turns one message into another through its JSON form: the SLSA
// predicate into the statement's google.protobuf.Struct, as the in-toto
// attestation Go bindings expect.
func convert(from, to proto.Message) error {
	b, err := protojson.Marshal(from)
	if err != nil {
		return err
	}
	return protojson.Unmarshal(b, to)
}

// marshal writes a message as compact JSON with protojson, which uses the
// proto's JSON names (_type, predicateType) that in-toto consumers read;
// protojson's output varies its whitespace on purpose, so it is compacted
// to stable bytes.
func marshal(m proto.Message) ([]byte, error) {
	b, err := protojson.Marshal(m)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
