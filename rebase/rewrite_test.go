package rebase

import (
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/snapshot"
)

// TestDryRun plans with the old and new base digests and os.versions,
// computes the variants the real run pushes, and writes nothing. (Its
// index digest is the real run's too: TestRebaseReproducible.)
func TestDryRun(t *testing.T) {
	f := newFixture(t)
	f.moveBases(t, winNew)
	o := testOptions()
	o.DryRun = true
	f.reg.ResetStats()
	plan, err := Rebase(ctx, f.app, tag(t, f.reg, "app:2"), o)
	if err != nil {
		t.Fatal(err)
	}
	if st := f.reg.Stats(); st.Put != 0 || st.Post != 0 || st.Patch != 0 || plan.Pushed {
		t.Errorf("dry run wrote: %s", st)
	}
	win := plan.Variants[2]
	if win.OldOSVersion != winOld || win.NewOSVersion != winNew || win.OldBase == win.NewBase || win.NewDigest == "" {
		t.Errorf("plan %+v", win)
	}
	res, err := Rebase(ctx, f.app, tag(t, f.reg, "app:2"), testOptions())
	if err != nil {
		t.Fatal(err)
	}
	got, want := res.Index.Manifest.Manifests, plan.Index.Manifest.Manifests
	if len(got) != 6 || len(want) != 6 {
		t.Fatalf("real run %d entries, plan %d: want 3 variants and 3 attestations", len(got), len(want))
	}
	for i := range got {
		same := got[i].Digest == want[i].Digest
		if snapshot.IsAttestation(got[i]) {
			same = snapshot.IsAttestation(want[i]) && got[i].Annotations[snapshot.AnnotationReferenceDigest] == want[i].Annotations[snapshot.AnnotationReferenceDigest]
		}
		if !same {
			t.Errorf("entry %d: real run %v, plan %v", i, got[i], want[i])
		}
	}
}

// TestDockerBaseIntoOCIImage: a new base with Docker media types gives an
// OCI image OCI layer media types with the Docker layer's digest.
func TestDockerBaseIntoOCIImage(t *testing.T) {
	f := newFixture(t)
	docker := regtest.Must(regtest.WindowsBaseImage(winNew, regtest.WithDockerMediaTypes()))(t)
	pushIndex(t, f.reg, "base/nanoserver:ltsc2025", docker)
	if _, err := Rebase(ctx, f.app, tag(t, f.reg, "app:2"), testOptions()); err != nil {
		t.Fatal(err)
	}
	idx, im := fetchIndex(t, tag(t, f.reg, "app:2"))
	m := regtest.Must(regtest.Must(idx.Image(im.Manifests[2].Digest))(t).Manifest())(t)
	dl := regtest.Must(docker.Manifest())(t).Layers[0]
	if m.MediaType != types.OCIManifestSchema1 || m.Layers[0].MediaType != types.OCILayer || m.Layers[0].Digest != dl.Digest ||
		m.Config.MediaType != types.OCIConfigJSON {
		t.Errorf("manifest %s, base layer %s %s (docker layer %s)", m.MediaType, m.Layers[0].MediaType, m.Layers[0].Digest, dl.Digest)
	}
}
