package snapshot_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	provenancetypes "github.com/moby/buildkit/solver/llbsolver/provenance/types"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/snapshot"
)

// indexReader reads the manifests and blobs of an in-memory index and
// counts the blob reads.
type indexReader struct {
	idx   v1.ImageIndex
	mu    sync.Mutex
	blobs []v1.Hash
}

func (r *indexReader) Manifest(_ context.Context, d v1.Hash) ([]byte, error) {
	img, err := r.idx.Image(d)
	if err != nil {
		return nil, err
	}
	return img.RawManifest()
}

func (r *indexReader) Blob(_ context.Context, d v1.Hash) ([]byte, error) {
	r.mu.Lock()
	r.blobs = append(r.blobs, d)
	r.mu.Unlock()
	im, err := r.idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, m := range im.Manifests {
		img, err := r.idx.Image(m.Digest)
		if err != nil {
			return nil, err
		}
		if l, err := img.LayerByDigest(d); err == nil {
			rc, err := l.Compressed()
			if err != nil {
				return nil, err
			}
			defer rc.Close()
			var b json.RawMessage
			return b, json.NewDecoder(rc).Decode(&b)
		}
	}
	return nil, fmt.Errorf("blob %s not found", d)
}

func load(t *testing.T, idx v1.ImageIndex) (*snapshot.Snapshot, *indexReader) {
	t.Helper()
	s, err := snapshot.LoadIndex(context.Background(), idx, 2)
	if err != nil {
		t.Fatal(err)
	}
	return s, &indexReader{idx: idx}
}

// TestLoadAttestations reads BuildKit-shaped provenance v0.2 and v1 and an
// SPDX SBOM: predicate types, subjects, builder ids and build types; SBOM
// layers are recognised by their annotation and never read.
func TestLoadAttestations(t *testing.T) {
	linux := regtest.Must(regtest.LinuxImage("amd64"))(t)
	win := regtest.Must(regtest.WindowsImage(regtest.OSVersionLTSC2025))(t)
	ld, wd := regtest.Must(linux.Digest())(t), regtest.Must(win.Digest())(t)
	idx := regtest.Must(regtest.Index(
		regtest.Entry{Image: linux},
		regtest.Entry{Image: win},
		regtest.Must(regtest.AttestationEntryOf(linux, regtest.ProvenanceV02("https://github.com/docker/buildx"), regtest.SPDX("busybox")))(t),
		regtest.Must(regtest.AttestationEntryOf(win, regtest.ProvenanceV1("https://github.com/imgctl/imgctl", "https://github.com/imgctl/imgctl/rebase/v1")))(t),
	))(t)
	s, r := load(t, idx)
	atts, err := snapshot.LoadAttestations(context.Background(), s, nil, r, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(atts) != 2 || atts[0].Subject != ld || atts[1].Subject != wd {
		t.Fatalf("attestations %+v, want one for %s and one for %s", atts, ld, wd)
	}
	lp, sbom, wp := atts[0].Statements[0], atts[0].Statements[1], atts[1].Statements[0]
	if lp.PredicateType != snapshot.PredicateSLSAProvenanceV02 || !lp.Read || lp.BuilderID != "https://github.com/docker/buildx" ||
		lp.BuildType != provenancetypes.BuildKitBuildType02 || !lp.Describes(ld) || lp.Describes(wd) {
		t.Errorf("v0.2 provenance read as %+v", lp)
	}
	if wp.PredicateType != snapshot.PredicateSLSAProvenanceV1 || wp.BuilderID != "https://github.com/imgctl/imgctl" ||
		wp.BuildType != "https://github.com/imgctl/imgctl/rebase/v1" || !wp.Describes(wd) {
		t.Errorf("v1 provenance read as %+v", wp)
	}
	if !snapshot.IsSBOM(sbom.PredicateType) || sbom.Read {
		t.Errorf("SBOM read as %+v, want recognised by its annotation", sbom)
	}
	if len(r.blobs) != 2 {
		t.Errorf("%d blob reads, want the 2 provenance statements", len(r.blobs))
	}

	only, err := snapshot.LoadAttestations(context.Background(), s, []v1.Hash{wd}, &indexReader{idx: idx}, 2)
	if err != nil || len(only) != 1 || only[0].Subject != wd {
		t.Fatalf("attestations of %s only: %+v, %v", wd, only, err)
	}
}

// TestStatementPrevious: a rebase provenance's resolvedDependencies named
// attestation-manifest are the earlier attestation manifests; BuildKit's
// base image dependency is not one.
func TestStatementPrevious(t *testing.T) {
	repo := regtest.Must(name.NewRepository("registry.example/ci/app"))(t)
	old := []name.Digest{repo.Digest("sha256:" + strings.Repeat("a", 64)), repo.Digest("sha256:" + strings.Repeat("b", 64))}
	for _, tc := range []struct {
		name string
		pred regtest.Predicate
		want []name.Digest
	}{
		{"rebase", regtest.Must(regtest.RebaseProvenance(old...))(t), old},
		{"BuildKit v1", regtest.ProvenanceV1("", provenancetypes.BuildKitBuildType1), nil},
	} {
		b, err := json.Marshal(map[string]any{"predicateType": tc.pred.Type, "predicate": tc.pred.Body})
		if err != nil {
			t.Fatal(err)
		}
		st, err := snapshot.ParseStatement(b)
		if err != nil || len(st.Previous) != len(tc.want) {
			t.Fatalf("%s: previous %v, %v; want %v", tc.name, st.Previous, err, tc.want)
		}
		for i, w := range tc.want {
			if got := st.Previous[i]; got.Digest.String() != w.DigestStr() || !strings.HasPrefix(got.URI, "pkg:docker/registry.example/ci/app") {
				t.Errorf("%s: previous %+v, want %s", tc.name, got, w)
			}
		}
	}
}

// TestParseStatement rejects what is not an in-toto statement.
func TestParseStatement(t *testing.T) {
	for _, tc := range []struct{ name, doc string }{
		{"not JSON", "{"},
		{"no predicate type", `{"_type":"https://in-toto.io/Statement/v0.1","subject":[]}`},
		{"bad subject digest", `{"predicateType":"x","subject":[{"name":"a","digest":{"sha256":"zz"}}]}`},
		{"bad v1 predicate", `{"predicateType":"https://slsa.dev/provenance/v1","predicate":{"runDetails":{"builder":{"id":7}}}}`},
		{"bad v0.2 predicate", `{"predicateType":"https://slsa.dev/provenance/v0.2","predicate":{"builder":"x"}}`},
	} {
		if _, err := snapshot.ParseStatement([]byte(tc.doc)); !errors.Is(err, snapshot.ErrInvalidStatement) {
			t.Errorf("%s: %v, want ErrInvalidStatement", tc.name, err)
		}
	}
}
