package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	intoto "github.com/in-toto/in-toto-golang/in_toto"
	slsa1 "github.com/in-toto/in-toto-golang/in_toto/slsa_provenance/v1"
	provenancetypes "github.com/moby/buildkit/solver/llbsolver/provenance/types"
	"github.com/spdx/tools-golang/spdx/v2/common"
	spdx "github.com/spdx/tools-golang/spdx/v2/v2_3"

	"github.com/imgctl/imgctl/internal/testing/buildtest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/snapshot"
)

// Predicate types of the statements BuildKit attaches.
const (
	predicateSLSA1 = "https://slsa.dev/provenance/v1"
	predicateSPDX  = intoto.PredicateSPDX
)

// statement is an in-toto statement with its predicate left raw.
type statement struct {
	intoto.StatementHeader
	Predicate json.RawMessage `json:"predicate"`
}

// attested is one image of an index with the statements of the one
// attestation manifest that names it.
type attested struct {
	image      v1.Descriptor
	manifest   v1.Descriptor // the attestation manifest
	statements []statement
}

func (a *attested) statement(t *testing.T, predicateType string) *statement {
	t.Helper()
	var found *statement
	for i, s := range a.statements {
		if s.PredicateType == predicateType {
			if found != nil {
				t.Errorf("%s: two %s statements", a.image.Platform, predicateType)
			}
			found = &a.statements[i]
		}
	}
	return found
}

// attestationsAt reads the index at tag: every image must have exactly one
// attestation manifest naming it (vnd.docker.reference.digest) and every
// attestation manifest must name an image of the index. It returns the
// images by platform string, with their statements.
func (e *e2e) attestationsAt(t *testing.T, tag string) map[string]*attested {
	t.Helper()
	ii, im := e.indexAt(t, tag)
	byDigest := map[string]*attested{}
	out := map[string]*attested{}
	for _, d := range im.Manifests {
		if !snapshot.IsAttestation(d) {
			a := &attested{image: d}
			byDigest[d.Digest.String()], out[d.Platform.String()] = a, a
		}
	}
	for _, d := range im.Manifests {
		if !snapshot.IsAttestation(d) {
			continue
		}
		subj := d.Annotations[snapshot.AnnotationReferenceDigest]
		a := byDigest[subj]
		switch {
		case d.Annotations[snapshot.AnnotationReferenceType] != snapshot.AttestationManifest:
			t.Errorf("attestation %s: reference type %q", d.Digest, d.Annotations[snapshot.AnnotationReferenceType])
		case a == nil:
			t.Errorf("attestation %s names %q, which is no image of the index", d.Digest, subj)
			continue
		case a.manifest.Digest != (v1.Hash{}):
			t.Errorf("image %s has two attestation manifests", subj)
		}
		a.manifest = d
		img := regtest.Must(ii.Image(d.Digest))(t)
		for _, ld := range regtest.Must(img.Manifest())(t).Layers {
			l := regtest.Must(img.LayerByDigest(ld.Digest))(t)
			rc := regtest.Must(l.Compressed())(t) // in-toto JSON, stored as it is
			dt, err := io.ReadAll(rc)
			_ = rc.Close()
			if err != nil {
				t.Fatal(err)
			}
			var s statement
			if err := json.Unmarshal(dt, &s); err != nil {
				t.Fatalf("attestation %s layer %s: %v", d.Digest, ld.Digest, err)
			}
			if got := ld.Annotations["in-toto.io/predicate-type"]; got != s.PredicateType {
				t.Errorf("attestation %s layer annotation %q, statement %q", d.Digest, got, s.PredicateType)
			}
			a.statements = append(a.statements, s)
		}
	}
	for p, a := range out {
		if a.manifest.Digest == (v1.Hash{}) {
			t.Errorf("image %s (%s) has no attestation manifest", p, a.image.Digest)
		}
	}
	return out
}

// provenance checks a's SLSA v1 provenance: its subject is the image, and
// its resolved dependencies name the base at the digest imgctl pinned.
// It returns the predicate.
func (e *e2e) provenance(t *testing.T, a *attested, base string) *provenancetypes.ProvenancePredicateSLSA1 {
	t.Helper()
	s := a.statement(t, predicateSLSA1)
	if s == nil {
		t.Fatalf("%s: no %s statement among %d", a.image.Platform, predicateSLSA1, len(a.statements))
	}
	if !slices.ContainsFunc(s.Subject, func(sub intoto.Subject) bool { return sub.Digest["sha256"] == a.image.Digest.Hex }) {
		t.Errorf("%s: provenance subjects %+v do not name the image %s", a.image.Platform, s.Subject, a.image.Digest)
	}
	var pr provenancetypes.ProvenancePredicateSLSA1
	if err := json.Unmarshal(s.Predicate, &pr); err != nil {
		t.Fatal(err)
	}
	if pr.BuildDefinition.BuildType != provenancetypes.BuildKitBuildType1 {
		t.Errorf("%s: build type %q", a.image.Platform, pr.BuildDefinition.BuildType)
	}
	pin, err := v1.NewHash(e.baseDigest(t, base))
	if err != nil {
		t.Fatal(err)
	}
	repo := repoPath(base)[len("/v2/"):]
	var deps []string
	found := false
	for _, d := range pr.BuildDefinition.ResolvedDependencies {
		deps = append(deps, d.URI+" "+d.Digest["sha256"])
		found = found || (d.Digest["sha256"] == pin.Hex && strings.Contains(d.URI, repo))
	}
	if !found {
		t.Errorf("%s: resolved dependencies do not name %s@%s:\n%s", a.image.Platform, repo, pin, strings.Join(deps, "\n"))
	}
	return &pr
}

// checkProvenance: the default build (no --provenance) attached a mode=min
// provenance to each of the four images, each naming its pinned base.
func (e *e2e) checkProvenance(t *testing.T) {
	atts := e.attestationsAt(t, e.tag)
	if len(atts) != 4 {
		t.Fatalf("%d images, want 4", len(atts))
	}
	for p, a := range atts {
		pr := e.provenance(t, a, e.wantBase(p))
		if _, ok := pr.BuildDefinition.ExternalParameters.Request.Args["build-arg:VERSION"]; ok {
			t.Errorf("%s: mode=min provenance records the build args", p)
		}
		if a.statement(t, predicateSPDX) != nil {
			t.Errorf("%s: an SBOM without --sbom", p)
		}
	}
}

// buildxReadsProvenance: buildx's own loader (`docker buildx imagetools
// inspect --format '{{json .Provenance}}'`) reads the provenance of each
// platform of the merged index (three solves), each naming the base of
// its platform. buildx keys platforms without os.version, so one of the
// two Windows images stands for both; its template turns a loader error
// (an attestation whose subject is missing) into an empty result, so the
// predicate's fields are asserted.
func (e *e2e) buildxReadsProvenance(t *testing.T) {
	out := regtest.BuildxInspect(t, e.reg.Host(), e.tag, "{{json .Provenance}}")
	var got map[string]struct {
		SLSA provenancetypes.ProvenancePredicateSLSA1 `json:"SLSA"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	bases := map[string][]string{
		"linux/amd64":   {e.bases.Distroless},
		"linux/arm64":   {e.bases.Distroless},
		"windows/amd64": {e.bases.Nanoserver2022, e.bases.Nanoserver2025},
	}
	if len(got) != len(bases) {
		t.Fatalf("buildx read provenance for %d platforms, want %d: %s", len(got), len(bases), out)
	}
	for p, prov := range got {
		want, ok := bases[p]
		if !ok {
			t.Errorf("unexpected platform %s", p)
			continue
		}
		if prov.SLSA.BuildDefinition.BuildType != provenancetypes.BuildKitBuildType1 {
			t.Errorf("%s: build type %q", p, prov.SLSA.BuildDefinition.BuildType)
		}
		var pins []string
		for _, b := range want {
			pins = append(pins, strings.TrimPrefix(e.baseDigest(t, b), "sha256:"))
		}
		if !slices.ContainsFunc(prov.SLSA.BuildDefinition.ResolvedDependencies, func(d slsa1.ResourceDescriptor) bool {
			return slices.Contains(pins, d.Digest["sha256"])
		}) {
			t.Errorf("%s: buildx read no resolved dependency at %v: %+v", p, pins, prov.SLSA.BuildDefinition.ResolvedDependencies)
		}
	}
}

// wantBase is the base each platform of examples/hello is built on.
func (e *e2e) wantBase(p string) string {
	switch p {
	case "windows/amd64:" + buildtest.OSVersionLTSC2022:
		return e.bases.Nanoserver2022
	case "windows/amd64:" + buildtest.OSVersionLTSC2025:
		return e.bases.Nanoserver2025
	}
	return e.bases.Distroless
}

// sbomAndMaxProvenance builds again with the local scanner and
// --provenance=mode=max,builder-id=URI: each image has one attestation
// manifest with a max provenance (the build args and the builder id
// recorded) and the scanner's SPDX
// document, which lists the app's binary with the digest of the binary
// in the image and, for Windows, the base's files under their C:\ paths
// without Files/ and no Hives/.
func (e *e2e) sbomAndMaxProvenance(t *testing.T) {
	scanner, err := buildtest.PushScanner(e.reg.Host() + "/tools/sbom-scanner:1")
	if err != nil {
		t.Fatal(err)
	}
	tag, builderID := e.reg.Host()+"/hello:sbom", "https://ci.example.com/runs/42"
	start := time.Now()
	out, stderr, code := run(t, append([]string{"build", "--builder", e.daemon.Addr, "--progress", "rawjson",
		"--sbom=generator=" + scanner, "--provenance=mode=max,builder-id=" + builderID, "-t", tag, "--build-arg", "VERSION=e2e"}, append(e.baseArgs, e.hello)...)...)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, tail(stderr, 60))
	}
	compiles, cached := compileVertices(stderr)
	t.Logf("sbom build took %s (%d of %d compile steps cached)", time.Since(start).Round(time.Millisecond), cached, compiles)
	if !strings.Contains(stderr, "note: SBOM: the scanner reads each image's whole filesystem") {
		t.Errorf("stderr lacks the --sbom note:\n%s", tail(stderr, 20))
	}
	if !strings.Contains(out, "PASSED") {
		t.Errorf("verify did not pass:\n%s", out)
	}
	ii, _ := e.indexAt(t, tag)
	atts := e.attestationsAt(t, tag)
	if len(atts) != 4 {
		t.Fatalf("%d images, want 4", len(atts))
	}
	for p, a := range atts {
		pr := e.provenance(t, a, e.wantBase(p))
		if got := pr.BuildDefinition.ExternalParameters.Request.Args["build-arg:VERSION"]; got != "e2e" || pr.BuildDefinition.InternalParameters.BuildConfig == nil {
			t.Errorf("%s: mode=max provenance: build-arg:VERSION %q, build config %v", p, got, pr.BuildDefinition.InternalParameters.BuildConfig != nil)
		}
		if pr.RunDetails.Builder.ID != builderID {
			t.Errorf("%s: builder id %q, want %q", p, pr.RunDetails.Builder.ID, builderID)
		}
		s := a.statement(t, predicateSPDX)
		if s == nil {
			t.Errorf("%s: no SPDX statement", p)
			continue
		}
		if !slices.ContainsFunc(s.Subject, func(sub intoto.Subject) bool { return sub.Digest["sha256"] == a.image.Digest.Hex }) {
			t.Errorf("%s: SBOM subjects %+v do not name the image %s", p, s.Subject, a.image.Digest)
		}
		var doc spdx.Document
		if err := json.Unmarshal(s.Predicate, &doc); err != nil {
			t.Fatal(err)
		}
		// BuildKit adds itself as a second creator.
		if doc.CreationInfo == nil || !slices.ContainsFunc(doc.CreationInfo.Creators, func(c common.Creator) bool { return c.Creator == buildtest.ScannerTool }) {
			t.Errorf("%s: SPDX creation info %+v", p, doc.CreationInfo)
		}
		files := map[string]string{}
		for _, f := range doc.Files {
			for _, c := range f.Checksums {
				files[f.FileName] = c.Value
			}
		}
		app, want := "/hello", []string{"/etc/passwd", "/etc/group"}
		if a.image.Platform.OS == "windows" {
			app, want = "/app/hello.exe", []string{"/License.txt", "/Windows/System32/cmd.exe"}
			for f := range files {
				if strings.HasPrefix(f, "/Files/") || strings.HasPrefix(f, "/Hives/") {
					t.Errorf("%s: the scanner saw %s: the Windows layout was not unpacked", p, f)
				}
			}
			t.Logf("%s: the scanner saw %d files: %s", p, len(files), strings.Join(sortedKeys(files), " "))
		}
		for _, f := range append(want, app) {
			if files[f] == "" {
				t.Errorf("%s: SBOM lacks %s; it lists %v", p, f, sortedKeys(files))
			}
		}
		if got, want := files[app], e.appDigest(t, ii, a.image); got != want {
			t.Errorf("%s: SBOM lists %s with sha256 %s, the image holds %s", p, app, got, want)
		}
	}
}

// noProvenance: --provenance=false builds an index with no attestation.
func (e *e2e) noProvenance(t *testing.T) {
	tag := e.reg.Host() + "/hello:noattest"
	out, stderr, code := run(t, append([]string{"build", "--builder", e.daemon.Addr, "--progress", "quiet",
		"--provenance=false", "-t", tag, "--build-arg", "VERSION=e2e"}, append(e.baseArgs, e.hello)...)...)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, tail(stderr, 40))
	}
	_, im := e.indexAt(t, tag)
	if len(im.Manifests) != 4 || slices.ContainsFunc(im.Manifests, snapshot.IsAttestation) {
		t.Errorf("index entries %+v: want the four images and no attestation", im.Manifests)
	}
}

// appDigest is the sha256 of the app binary (the last layer's only file)
// of the image d of ii.
func (e *e2e) appDigest(t *testing.T, ii v1.ImageIndex, d v1.Descriptor) string {
	t.Helper()
	layers := regtest.Must(regtest.Must(ii.Image(d.Digest))(t).Layers())(t)
	name := "hello"
	if d.Platform.OS == "windows" {
		name = "Files/app/hello.exe"
	}
	h := sha256.New()
	found := false
	forEachTarEntry(t, layers[len(layers)-1], func(n string, r io.Reader) {
		if strings.TrimPrefix(n, "/") == name {
			found = true
			if _, err := io.Copy(h, r); err != nil {
				t.Fatal(err)
			}
		}
	})
	if !found {
		t.Fatalf("%s: no %s in the last layer", d.Platform, name)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// maxProvenanceGraft: --provenance=mode=max keeps the graft. Each Windows
// image's max provenance records the build definition and the build args,
// names the real base (pinned) and never the placeholder imgctl solved on,
// its subject is the grafted image, and buildx's own loader reads it.
func (e *e2e) maxProvenanceGraft(t *testing.T) {
	tag := e.reg.Host() + "/hello:max"
	out, stderr, code := run(t, append([]string{"build", "-v", "--builder", e.daemon.Addr, "--progress", "plain", "--platform", "windows/amd64",
		"--provenance=mode=max", "-t", tag, "--build-arg", "VERSION=e2e"}, append(e.baseArgs, e.hello)...)...)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, tail(stderr, 60))
	}
	if strings.Count(stderr, "msg=grafting") != 2 || strings.Contains(stderr, "plain path") {
		t.Errorf("want both Windows variants grafted, no plain path:\n%s", tail(stderr, 40))
	}
	atts := e.attestationsAt(t, tag)
	if len(atts) != 2 {
		t.Fatalf("%d images, want the 2 Windows ones", len(atts))
	}
	for p, a := range atts {
		pr := e.provenance(t, a, e.wantBase(p)) // subject: the grafted image; the base pinned
		if got := pr.BuildDefinition.ExternalParameters.Request.Args["build-arg:VERSION"]; got != "e2e" || pr.BuildDefinition.InternalParameters.BuildConfig == nil {
			t.Errorf("%s: mode=max provenance: build-arg:VERSION %q, build config %v", p, got, pr.BuildDefinition.InternalParameters.BuildConfig != nil)
		}
		raw := string(a.statement(t, predicateSLSA1).Predicate)
		// The placeholder lives in the tag's repository, by digest.
		if strings.Contains(raw, e.reg.Host()+"/hello@") || strings.Contains(raw, "hello@sha256") {
			t.Errorf("%s: the provenance names the tag's repository (the placeholder):\n%s", p, raw)
		}
		base := e.wantBase(p)
		if !strings.Contains(raw, "docker-image://"+strings.SplitN(base, ":", 3)[0]) && !strings.Contains(raw, repoPath(base)[len("/v2/"):]) {
			t.Errorf("%s: the build definition does not name the base %s", p, base)
		}
	}
	// buildx keys platforms without os.version: the two Windows images are
	// one platform to it, which its template prints without a map.
	got := regtest.BuildxInspect(t, e.reg.Host(), tag, "{{json .Provenance}}")
	var w struct {
		SLSA provenancetypes.ProvenancePredicateSLSA1 `json:"SLSA"`
	}
	if err := json.Unmarshal(got, &w); err != nil {
		t.Fatalf("%v: %s", err, got)
	}
	if w.SLSA.BuildDefinition.InternalParameters.BuildConfig == nil || len(w.SLSA.BuildDefinition.ResolvedDependencies) == 0 ||
		strings.Contains(string(got), e.reg.Host()+"/hello@") {
		t.Errorf("buildx read no max provenance for windows/amd64: %s", got)
	}
}
