package regtest

import (
	"encoding/json"
	"fmt"
	"net/url"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	slsa "github.com/in-toto/in-toto-golang/in_toto/slsa_provenance/common"
	slsa1 "github.com/in-toto/in-toto-golang/in_toto/slsa_provenance/v1"
	provenancetypes "github.com/moby/buildkit/solver/llbsolver/provenance/types"
	"github.com/moby/buildkit/util/purl"
	"github.com/package-url/packageurl-go"

	"github.com/imgctl/imgctl/snapshot"
)

// Predicate is the predicate of one in-toto statement of an attestation
// manifest built by AttestationOf.
type Predicate struct {
	Type string
	Body any
}

// ProvenanceV1 returns a SLSA v1 provenance predicate as BuildKit v0.34
// writes it (with BuildKit's own types) for a Dockerfile build on alpine,
// with builderID (BuildKit leaves it empty unless the build names one) and
// buildType (BuildKit's is provenancetypes.BuildKitBuildType1).
func ProvenanceV1(builderID, buildType string) Predicate {
	return Predicate{Type: slsa1.PredicateSLSAProvenance, Body: buildkitProvenance(builderID, buildType)}
}

// ProvenanceV02 returns the SLSA v0.2 provenance BuildKit writes by
// default (BuildKit's conversion of ProvenanceV1's), with builderID; its
// build type is provenancetypes.BuildKitBuildType02.
func ProvenanceV02(builderID string) Predicate {
	p := buildkitProvenance(builderID, provenancetypes.BuildKitBuildType1).ConvertToSLSA02()
	return Predicate{Type: SLSAProvenanceV02, Body: p}
}

func buildkitProvenance(builderID, buildType string) *provenancetypes.ProvenancePredicateSLSA1 {
	start, end := FixtureTime, FixtureTime.Add(42e9)
	p := &provenancetypes.ProvenancePredicateSLSA1{}
	p.BuildDefinition.BuildType = buildType
	p.BuildDefinition.ResolvedDependencies = []slsa1.ResourceDescriptor{{
		URI:    "pkg:docker/alpine@3.20?platform=linux%2Famd64",
		Digest: slsa.DigestSet{"sha256": "beefdbd8a1da6d2915566fde36db9db0b524eb737fc57cd1367effd16dc0d06d"},
	}}
	p.BuildDefinition.ExternalParameters = provenancetypes.ProvenanceExternalParametersSLSA1{
		ConfigSource: provenancetypes.ProvenanceConfigSourceSLSA1{Path: "Dockerfile"},
		Request:      provenancetypes.Parameters{Frontend: "dockerfile.v0", Args: map[string]string{"build-arg:VERSION": "1.0"}},
	}
	p.BuildDefinition.InternalParameters = provenancetypes.ProvenanceInternalParametersSLSA1{BuilderPlatform: "linux/amd64", DockerfileVersion: "1.12.0"}
	p.RunDetails.Builder.ID = builderID
	p.RunDetails.Metadata = &provenancetypes.ProvenanceMetadataSLSA1{
		BuildMetadata: slsa1.BuildMetadata{InvocationID: "ylxwt3fx0yd52mlgbj1jm3u5x", StartedOn: &start, FinishedOn: &end},
		Completeness:  provenancetypes.BuildKitComplete{Request: true, ResolvedDependencies: true},
	}
	return p
}

// SPDX returns an SPDX 2.3 document predicate, the JSON BuildKit's scanner
// protocol requires under predicate type https://spdx.dev/Document, listing
// one package.
func SPDX(pkg string) Predicate {
	return Predicate{Type: snapshot.PredicateSPDX, Body: map[string]any{
		"spdxVersion": "SPDX-2.3", "dataLicense": "CC0-1.0", "SPDXID": "SPDXRef-DOCUMENT",
		"name": "sbom", "documentNamespace": "https://example.invalid/spdx/" + url.PathEscape(pkg),
		"creationInfo": map[string]any{"created": FixtureTime.Format("2006-01-02T15:04:05Z"), "creators": []string{"Tool: regtest"}},
		"packages":     []map[string]any{{"name": pkg, "SPDXID": "SPDXRef-Package-" + pkg, "downloadLocation": "NOASSERTION"}},
	}}
}

// AttestationOf returns a BuildKit-style attestation manifest with one
// in-toto statement per predicate, each naming about as its subject:
// layers of media type application/vnd.in-toto+json annotated with
// in-toto.io/predicate-type, a config of platform unknown/unknown.
func AttestationOf(about v1.Hash, preds ...Predicate) (v1.Image, error) {
	var layers []statementLayer
	for _, p := range preds {
		body, err := json.Marshal(p.Body)
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(map[string]any{
			"_type":         "https://in-toto.io/Statement/v0.1",
			"predicateType": p.Type,
			"subject":       []subject{{Name: "pkg:docker/imgctl/app@1.0", Digest: map[string]string{about.Algorithm: about.Hex}}},
			"predicate":     json.RawMessage(body),
		})
		if err != nil {
			return nil, err
		}
		layers = append(layers, statementLayer{body: b, predicateType: p.Type})
	}
	return attestationImage(layers...)
}

// statementLayer is one in-toto statement of an attestation manifest.
type statementLayer struct {
	body          []byte
	predicateType string
}

// attestationImage returns an attestation manifest in BuildKit's layout:
// one layer of media type application/vnd.in-toto+json per statement,
// annotated with in-toto.io/predicate-type, and a config of platform
// unknown/unknown.
func attestationImage(stmts ...statementLayer) (v1.Image, error) {
	img := empty.Image
	for _, st := range stmts {
		var err error
		if img, err = mutate.Append(img, mutate.Addendum{
			Layer:       static.NewLayer(st.body, InTotoMediaType),
			Annotations: map[string]string{AnnotationPredicateType: st.predicateType},
		}); err != nil {
			return nil, fmt.Errorf("making attestation: %w", err)
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.History = AttestationPlatform.OS, AttestationPlatform.Architecture, nil
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return nil, err
	}
	return withMediaTypes(img, false), nil
}

// SupplyChainIndex returns an index of a Linux and a Windows
// (OSVersionLTSC2025) image, each followed by its attestation manifest:
// BuildKit's SLSA v0.2 provenance for Linux, imgctl rebase's SLSA v1 for
// Windows, each with an SPDX SBOM unless sbom is false.
func SupplyChainIndex(sbom bool) (v1.ImageIndex, error) {
	linux, err := LinuxImage("amd64")
	if err != nil {
		return nil, err
	}
	win, err := WindowsImage(OSVersionLTSC2025)
	if err != nil {
		return nil, err
	}
	rebase, err := RebaseProvenance()
	if err != nil {
		return nil, err
	}
	lp, wp := []Predicate{ProvenanceV02("")}, []Predicate{rebase}
	if sbom {
		lp, wp = append(lp, SPDX("busybox")), append(wp, SPDX("cmd"))
	}
	le, err := AttestationEntryOf(linux, lp...)
	if err != nil {
		return nil, err
	}
	we, err := AttestationEntryOf(win, wp...)
	if err != nil {
		return nil, err
	}
	return Index(Entry{Image: linux}, le, Entry{Image: win}, we)
}

// AttestationEntryOf returns the index Entry of an attestation manifest
// attached to img (its reference annotations point at img) whose
// statements describe img, with the given predicates.
func AttestationEntryOf(img v1.Image, preds ...Predicate) (Entry, error) {
	d, err := img.Digest()
	if err != nil {
		return Entry{}, err
	}
	return AttachedEntry(d, d, preds...)
}

// AttachedEntry returns the index Entry of an attestation manifest
// attached to subject whose statements describe about: the two differ for
// an attestation left behind by a tool that changed the image.
func AttachedEntry(subject, about v1.Hash, preds ...Predicate) (Entry, error) {
	att, err := AttestationOf(about, preds...)
	if err != nil {
		return Entry{}, err
	}
	p := AttestationPlatform
	return Entry{Image: att, Platform: &p, Annotations: map[string]string{
		snapshot.AnnotationReferenceType:   snapshot.AttestationManifest,
		snapshot.AnnotationReferenceDigest: subject.String(),
	}}, nil
}

// AttestedIndex returns an index of imgs, each followed by its attestation
// manifest with preds (in BuildKit's order), or of imgs alone without
// preds.
func AttestedIndex(imgs []v1.Image, preds ...Predicate) (v1.ImageIndex, error) {
	var entries []Entry
	for _, img := range imgs {
		entries = append(entries, Entry{Image: img})
		if len(preds) == 0 {
			continue
		}
		e, err := AttestationEntryOf(img, preds...)
		if err != nil {
			return nil, err
		}
		entries = append(entries, e)
	}
	return Index(entries...)
}

// RebaseProvenance returns a SLSA v1 provenance shaped as imgctl rebase
// writes it: its builder id and build type, and each of previous (the
// image's attestation manifests before the rebase, where the source index
// keeps them) as a resolvedDependency named "attestation-manifest" with
// its package URL.
func RebaseProvenance(previous ...name.Digest) (Predicate, error) {
	p := buildkitProvenance("https://github.com/imgctl/imgctl", "https://github.com/imgctl/imgctl/rebase/v1")
	for _, ref := range previous {
		u, err := purl.RefToPURL(packageurl.TypeDocker, ref.String(), nil)
		if err != nil {
			return Predicate{}, err
		}
		d, err := v1.NewHash(ref.DigestStr())
		if err != nil {
			return Predicate{}, err
		}
		p.BuildDefinition.ResolvedDependencies = append(p.BuildDefinition.ResolvedDependencies, slsa1.ResourceDescriptor{
			Name: snapshot.AttestationManifest, URI: u,
			Digest: slsa.DigestSet{d.Algorithm: d.Hex}, MediaType: "application/vnd.oci.image.manifest.v1+json",
		})
	}
	return Predicate{Type: slsa1.PredicateSLSAProvenance, Body: p}, nil
}
