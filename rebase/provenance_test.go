package rebase

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	slsa "github.com/in-toto/attestation/go/predicates/provenance/v1"
	intoto "github.com/in-toto/attestation/go/v1"
	"github.com/moby/buildkit/util/purl"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/snapshot"
)

// manifestPuts records the manifests clients PUT, by reference.
type manifestPuts struct {
	mu   sync.Mutex
	refs []string
}

func (m *manifestPuts) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/") {
			m.mu.Lock()
			m.refs = append(m.refs, r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:])
			m.mu.Unlock()
		}
		next.ServeHTTP(w, r)
	})
}

// attestationOf returns the index's attestation descriptors for subject.
func attestationOf(im *v1.IndexManifest, subject v1.Hash) []v1.Descriptor {
	var out []v1.Descriptor
	for _, d := range im.Manifests {
		if snapshot.IsAttestation(d) && d.Annotations[snapshot.AnnotationReferenceDigest] == subject.String() {
			out = append(out, d)
		}
	}
	return out
}

// readProvenance reads the attestation manifest d of idx, checks BuildKit's
// layout, and returns its statement and predicate.
func readProvenance(t *testing.T, idx v1.ImageIndex, d v1.Descriptor) (*intoto.Statement, *slsa.Provenance) {
	t.Helper()
	if d.MediaType != types.OCIManifestSchema1 || d.Platform == nil || !snapshot.IsAttestationPlatform(d.Platform) ||
		d.Annotations[snapshot.AnnotationReferenceType] != snapshot.AttestationManifest {
		t.Fatalf("attestation descriptor %+v", d)
	}
	img := regtest.Must(idx.Image(d.Digest))(t)
	m := regtest.Must(img.Manifest())(t)
	cf := regtest.Must(img.ConfigFile())(t)
	if m.MediaType != types.OCIManifestSchema1 || m.Config.MediaType != types.OCIConfigJSON || len(m.Layers) != 1 {
		t.Fatalf("attestation manifest %+v", m)
	}
	l := m.Layers[0]
	if string(l.MediaType) != snapshot.InTotoMediaType || l.Annotations[snapshot.AnnotationPredicateType] != snapshot.PredicateSLSAProvenanceV1 {
		t.Errorf("statement layer %+v", l)
	}
	if cf.OS != "unknown" || cf.Architecture != "unknown" || cf.RootFS.Type != "layers" || len(cf.RootFS.DiffIDs) != 1 || cf.RootFS.DiffIDs[0] != l.Digest {
		t.Errorf("attestation config %+v", cf)
	}
	rc := regtest.Must(regtest.Must(img.LayerByDigest(l.Digest))(t).Uncompressed())(t)
	raw := regtest.Must(io.ReadAll(rc))(t)
	st := &intoto.Statement{}
	if err := protojson.Unmarshal(raw, st); err != nil {
		t.Fatalf("statement %s: %v", raw, err)
	}
	if err := st.Validate(); err != nil || st.GetType() != intoto.StatementTypeUri || st.GetPredicateType() != snapshot.PredicateSLSAProvenanceV1 {
		t.Errorf("statement %s: %v", raw, err)
	}
	p := &slsa.Provenance{}
	if err := protojson.Unmarshal(regtest.Must(protojson.Marshal(st.GetPredicate()))(t), p); err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(); err != nil {
		t.Errorf("predicate: %v", err)
	}
	return st, p
}

// deps returns the resolvedDependencies of p by name.
func deps(p *slsa.Provenance) map[string][]*intoto.ResourceDescriptor {
	out := map[string][]*intoto.ResourceDescriptor{}
	for _, d := range p.GetBuildDefinition().GetResolvedDependencies() {
		out[d.GetName()] = append(out[d.GetName()], d)
	}
	return out
}

// TestRebaseProvenance: each rebased variant gets one attestation manifest
// in BuildKit's layout with imgctl's SLSA provenance v1 about the new
// image, naming the source variant, the old and new base, imgctl's version
// and the variant's old attestation, which stays resolvable in the target
// repository. Every attestation of the new index points at a subject in it,
// and each new attestation costs two small uploads and one manifest PUT.
func TestRebaseProvenance(t *testing.T) {
	f := newFixture(t)
	_, srcIndex := fetchIndex(t, f.app)
	srcDigest := regtest.Must(remote.Head(f.app))(t).Digest.String()
	f.moveBases(t, winNew)
	newWin := regtest.Must(regtest.WindowsBaseImage(winNew))(t)
	newLin := linuxBases(t, "distroless-2")
	var blobs blobLog
	var puts manifestPuts
	f.reg.SetMiddleware(func(h http.Handler) http.Handler { return blobs.middleware(puts.middleware(h)) })
	res, target := rebaseApp(t, f, testOptions())
	idx, im := fetchIndex(t, target)
	inIndex := map[string]bool{}
	for _, d := range im.Manifests {
		if !snapshot.IsAttestation(d) {
			inIndex[d.Digest.String()] = true
		}
	}
	for _, d := range im.Manifests {
		if snapshot.IsAttestation(d) && !inIndex[d.Annotations[snapshot.AnnotationReferenceDigest]] {
			t.Errorf("attestation %s points at %s, which is not in the index", d.Digest, d.Annotations[snapshot.AnnotationReferenceDigest])
		}
	}
	oldBase := map[string]v1.Image{"windows": f.winBase["amd64"], "amd64": f.linBase["amd64"], "arm64": f.linBase["arm64"]}
	newBase := map[string]v1.Image{"windows": newWin, "amd64": newLin["amd64"], "arm64": newLin["arm64"]}
	for i, v := range res.Variants {
		d := im.Manifests[i]
		if v.NewDigest != d.Digest.String() {
			t.Fatalf("variant %d: new digest %s, index entry %s", i, v.NewDigest, d.Digest)
		}
		key := d.Platform.Architecture
		if d.Platform.OS == "windows" {
			key = "windows"
		}
		atts := attestationOf(im, d.Digest)
		if len(atts) != 1 || v.Provenance != atts[0].Digest.String() {
			t.Fatalf("%s: attestations %v, want 1 (Result says %s)", v.Platform, atts, v.Provenance)
		}
		st, p := readProvenance(t, idx, atts[0])
		subj := st.GetSubject()
		if len(subj) != 1 || subj[0].GetDigest()["sha256"] != d.Digest.Hex ||
			!strings.HasPrefix(subj[0].GetName(), "pkg:docker/"+f.reg.Host()+"/app@2?platform=") {
			t.Errorf("%s: subject %v", v.Platform, subj)
		}
		bd, rd := p.GetBuildDefinition(), p.GetRunDetails()
		if bd.GetBuildType() != BuildType || rd.GetBuilder().GetId() != DefaultBuilderID || rd.GetBuilder().GetVersion()["imgctl"] != "v1.2.3-test" {
			t.Errorf("%s: buildType %q builder %v", v.Platform, bd.GetBuildType(), rd.GetBuilder())
		}
		md := rd.GetMetadata()
		created := regtest.Must(newBase[key].ConfigFile())(t).Created.Time
		if !strings.HasPrefix(md.GetInvocationId(), "sha256:") || !md.GetStartedOn().AsTime().Equal(created) || !md.GetFinishedOn().AsTime().Equal(created) {
			t.Errorf("%s: metadata %v, want a digest id and the new base's creation time %s", v.Platform, md, created)
		}
		ext := bd.GetExternalParameters().AsMap()
		if ext["source"] != f.app.String() || ext["target"] != target.String() || ext["base"] != v.BaseName || ext["platform"] != v.Platform {
			t.Errorf("%s: externalParameters %v", v.Platform, ext)
		}
		byName := deps(p)
		for _, c := range []struct {
			name, digest string
			ann          map[string]any
		}{
			{DependencySource, v.Digest, map[string]any{"index": srcDigest, "ref": f.app.String()}},
			{DependencyOldBase, digest(t, oldBase[key]).String(), map[string]any{"recorded": v.OldBase}},
			{DependencyNewBase, digest(t, newBase[key]).String(), nil},
			{DependencyAttestation, attestationOf(srcIndex, hashOf(v.Digest))[0].Digest.String(), map[string]any{"subject": v.Digest}},
		} {
			got := byName[c.name]
			if len(got) != 1 || "sha256:"+got[0].GetDigest()["sha256"] != c.digest {
				t.Errorf("%s: %s dependency %v, want digest %s", v.Platform, c.name, got, c.digest)
				continue
			}
			ann := got[0].GetAnnotations().AsMap()
			for k, want := range c.ann {
				if ann[k] != want {
					t.Errorf("%s: %s annotation %s = %v, want %v", v.Platform, c.name, k, ann[k], want)
				}
			}
		}
		// The bases are named as BuildKit names them: the reference as a
		// package URL (the tag its version), with the platform.
		colon := strings.LastIndex(v.BaseName, ":")
		baseURL := "pkg:docker/" + v.BaseName[:colon] + "@" + v.BaseName[colon+1:]
		for _, n := range []string{DependencyOldBase, DependencyNewBase} {
			if b := byName[n]; len(b) == 1 && !strings.HasPrefix(b[0].GetUri(), baseURL+"?platform=") {
				t.Errorf("%s: %s uri %s, want %s?platform=...", v.Platform, n, b[0].GetUri(), baseURL)
			}
		}
		if src := byName[DependencySource]; len(src) == 1 && !strings.Contains(src[0].GetUri(), "/app?digest="+v.Digest) {
			t.Errorf("%s: source uri %s", v.Platform, src[0].GetUri())
		}
		// The old attestation resolves where its uri names it: in the
		// source repository, here also the target's.
		if old := byName[DependencyAttestation]; len(old) == 1 {
			if got, want := resolveURI(t, old[0].GetUri()), "sha256:"+old[0].GetDigest()["sha256"]; got != want {
				t.Errorf("%s: old attestation %s resolves to %s, want %s", v.Platform, old[0].GetUri(), got, want)
			}
		}
	}
	// Writes: three new configs and, per attestation, its config and its
	// statement; three variant manifests, three attestations and the index.
	blobs.mu.Lock()
	written := len(blobs.written)
	blobs.mu.Unlock()
	puts.mu.Lock()
	putRefs := slices.Clone(puts.refs)
	puts.mu.Unlock()
	if written != 3+2*3 || len(putRefs) != 3+3+1 {
		t.Errorf("uploaded %d blobs (want 9), PUT manifests %v (want 7)", written, putRefs)
	}
}

// resolveURI reads the digest a dependency's package URL names in the
// registry ("" when absent).
func resolveURI(t *testing.T, uri string) string {
	t.Helper()
	s, _, err := purl.PURLToRef(uri)
	if err != nil {
		t.Fatalf("%s: %v", uri, err)
	}
	d, err := remote.Head(regtest.Must(name.ParseReference(s))(t))
	if err != nil {
		return ""
	}
	return d.Digest.String()
}

// TestRebaseProvenanceOptions: the builder id can be set (a CI system's
// identity), and into another repository the old attestations are named
// in the source repository, where the source tag keeps them, and not
// copied.
func TestRebaseProvenanceOptions(t *testing.T) {
	f := newFixture(t)
	_, srcIndex := fetchIndex(t, f.app)
	f.moveBases(t, winNew)
	o := testOptions()
	for _, bad := range []string{"ci", "/relative/path", "ci.example.com/rebase"} {
		o.BuilderID = bad
		if _, err := Rebase(ctx, f.app, tag(t, f.reg, "elsewhere/app:2"), o); !errors.Is(err, ErrBuilderID) {
			t.Errorf("builder id %q: got %v, want ErrBuilderID", bad, err)
		}
	}
	o.BuilderID = "https://ci.example.com/monthly-rebase"
	target := tag(t, f.reg, "elsewhere/app:2")
	if _, err := Rebase(ctx, f.app, target, o); err != nil {
		t.Fatal(err)
	}
	idx, im := fetchIndex(t, target)
	n := 0
	for _, d := range im.Manifests {
		if !snapshot.IsAttestation(d) {
			continue
		}
		n++
		_, p := readProvenance(t, idx, d)
		if id := p.GetRunDetails().GetBuilder().GetId(); id != o.BuilderID {
			t.Errorf("builder id %q, want %q", id, o.BuilderID)
		}
		if v := p.GetRunDetails().GetBuilder().GetVersion()["imgctl"]; v != "unknown" {
			t.Errorf("version %q, want unknown when not given", v)
		}
		old := deps(p)[DependencyAttestation]
		if len(old) != 1 || !strings.HasPrefix(old[0].GetUri(), "pkg:docker/"+f.reg.Host()+"/app?digest=") ||
			resolveURI(t, old[0].GetUri()) != "sha256:"+old[0].GetDigest()["sha256"] {
			t.Fatalf("attestation dependency %v: want it named and resolvable in the source repository", old)
		}
	}
	for _, d := range srcIndex.Manifests {
		if !snapshot.IsAttestation(d) {
			continue
		}
		if got, err := remote.Head(target.Context().Digest(d.Digest.String())); err == nil {
			t.Errorf("old attestation %s was copied into %s (%s)", d.Digest, target.Context(), got.Digest)
		}
	}
	if n != 3 {
		t.Errorf("%d attestations, want 3", n)
	}
}

// TestRebaseDropsSBOM: a variant whose attestation holds an SBOM gets a
// provenance only; a note says why, and the dependency lists the old
// manifest's predicate types, the SBOM's among them.
func TestRebaseDropsSBOM(t *testing.T) {
	f := newFixture(t)
	prov := regtest.Must(regtest.AttestationEntry(f.win))(t)
	spdx := regtest.Must(json.Marshal(map[string]any{
		"_type": intoto.StatementTypeUri, "predicateType": snapshot.PredicateSPDX,
		"subject":   []map[string]any{{"name": "app", "digest": map[string]string{"sha256": digest(t, f.win).Hex}}},
		"predicate": map[string]any{"spdxVersion": "SPDX-2.3", "name": "app", "packages": []any{}},
	}))(t)
	withSBOM := regtest.Must(mutate.Append(prov.Image, mutate.Addendum{
		Layer:       static.NewLayer(spdx, snapshot.InTotoMediaType),
		Annotations: map[string]string{snapshot.AnnotationPredicateType: snapshot.PredicateSPDX},
	}))(t)
	prov.Image = withSBOM
	srcRef, _, err := f.reg.PushTag("sbom:1", regtest.Must(regtest.Index(regtest.Entry{Image: f.win}, prov))(t))
	if err != nil {
		t.Fatal(err)
	}
	f.moveBases(t, winNew)
	target := tag(t, f.reg, "sbom:2")
	res, err := Rebase(ctx, srcRef, target, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if countContains(res.Notes, "SBOM is not carried over") != 1 || countContains(res.Notes, "(provenance, SBOM)") != 1 {
		t.Errorf("notes %q", res.Notes)
	}
	idx, im := fetchIndex(t, target)
	atts := attestationOf(im, im.Manifests[0].Digest)
	if len(im.Manifests) != 2 || len(atts) != 1 {
		t.Fatalf("entries %v", im.Manifests)
	}
	m := regtest.Must(regtest.Must(idx.Image(atts[0].Digest))(t).Manifest())(t)
	for _, l := range m.Layers {
		if l.Annotations[snapshot.AnnotationPredicateType] == snapshot.PredicateSPDX {
			t.Errorf("the old SBOM was carried into the new attestation")
		}
	}
	_, p := readProvenance(t, idx, atts[0])
	old := deps(p)[DependencyAttestation]
	if len(old) != 1 {
		t.Fatalf("attestation dependency %v", old)
	}
	types := old[0].GetAnnotations().AsMap()["predicateTypes"]
	if !slices.Equal(types.([]any), []any{regtest.SLSAProvenanceV02, snapshot.PredicateSPDX}) {
		t.Errorf("predicate types %v", types)
	}
}

// TestRebaseReproducible: the same rebase gives the same index and
// provenance digests, run after run: 30 runs (29 dry runs and the real
// one; the issue measured 0 of 30 before), each logged; SOURCE_DATE_EPOCH
// (Options.SourceDateEpoch) sets the recorded times.
func TestRebaseReproducible(t *testing.T) {
	f := newFixture(t)
	f.moveBases(t, winNew)
	dry := testOptions()
	dry.DryRun, dry.Version = true, "v1.2.3-test"
	var digests []string
	var provs [][]string
	for range 29 {
		plan, err := Rebase(ctx, f.app, tag(t, f.reg, "app:2"), dry)
		if err != nil {
			t.Fatal(err)
		}
		digests = append(digests, plan.Index.Digest.String())
		var p []string
		for _, v := range plan.Variants {
			p = append(p, v.Provenance)
		}
		provs = append(provs, p)
	}
	res, _ := rebaseApp(t, f, testOptions())
	var p []string
	for _, v := range res.Variants {
		p = append(p, v.Provenance)
	}
	digests, provs = append(digests, res.Index.Digest.String()), append(provs, p)
	same := 0
	for i := range digests {
		if digests[i] == digests[0] && slices.Equal(provs[i], provs[0]) {
			same++
		} else {
			t.Errorf("run %d: index %s provenance %v; run 0: index %s provenance %v", i, digests[i], provs[i], digests[0], provs[0])
		}
	}
	t.Logf("%d of %d runs gave index %s", same, len(digests), digests[0])
	epoch := time.Unix(1764633600, 0).UTC()
	o := testOptions()
	o.SourceDateEpoch = &epoch
	res, err := Rebase(ctx, f.app, tag(t, f.reg, "app:epoch"), o)
	if err != nil {
		t.Fatal(err)
	}
	idx, im := fetchIndex(t, tag(t, f.reg, "app:epoch"))
	for _, v := range res.Variants {
		atts := attestationOf(im, regtest.Must(v1.NewHash(v.NewDigest))(t))
		if len(atts) != 1 {
			t.Fatalf("%s: %d attestations", v.Platform, len(atts))
		}
		_, pr := readProvenance(t, idx, atts[0])
		md := pr.GetRunDetails().GetMetadata()
		if !md.GetStartedOn().AsTime().Equal(epoch) || !md.GetFinishedOn().AsTime().Equal(epoch) {
			t.Errorf("%s: times %v, want SOURCE_DATE_EPOCH %s", v.Platform, md, epoch)
		}
	}
}
