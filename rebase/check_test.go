package rebase

import (
	"errors"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/snapshot"
)

// TestCheck reports every variant current, then stale once the bases move,
// with the recorded and current base digests and os.versions.
func TestCheck(t *testing.T) {
	f := newFixture(t)
	f.reg.ResetStats()
	st, err := Check(ctx, f.app, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("check: %s", f.reg.Stats())
	if st.Stale || len(st.Variants) != 3 {
		t.Fatalf("fresh index: %+v", st)
	}
	win := st.Variants[2]
	if win.BaseName != f.nanoserver || win.BaseSource != SourceManifest || win.OldBase != win.NewBase ||
		win.OldOSVersion != winOld || win.NewOSVersion != winOld {
		t.Errorf("windows variant %+v", win)
	}
	if lin := st.Variants[0]; lin.BaseName != f.distro || lin.OldBase == lin.NewBase || lin.Stale {
		t.Errorf("linux variant (recorded the base index) %+v", lin)
	}
	if st.Variants[0].Digest != digest(t, f.amd).String() {
		t.Errorf("digest %s", st.Variants[0].Digest)
	}
	f.moveBases(t, winNew)
	if st, err = Check(ctx, f.app, testOptions()); err != nil {
		t.Fatal(err)
	}
	for _, v := range st.Variants {
		if !v.Stale || v.BuildChange || v.NewDigest != "" {
			t.Errorf("after the bases moved: %+v", v)
		}
	}
	if win := st.Variants[2]; win.NewOSVersion != winNew || win.OldOSVersion != winOld {
		t.Errorf("windows %+v", win)
	}
	if _, err := Check(ctx, f.reg.MustRef(t, "base/nanoserver:ltsc2025"), testOptions()); !errors.Is(err, ErrNoBase) {
		t.Errorf("an index without base annotations: got %v, want ErrNoBase", err)
	}
	if _, err := Check(ctx, pushImage(t, f, "single:1", f.win), testOptions()); !errors.Is(err, registry.ErrNotAnIndex) {
		t.Errorf("single image: got %v, want registry.ErrNotAnIndex", err)
	}
}

// TestBaseFromFlagOrDescriptor: without manifest annotations the base
// comes from the descriptor annotations or from Options.Bases. Without a
// recorded digest, Check compares layers, and Rebase refuses.
func TestBaseFromFlagOrDescriptor(t *testing.T) {
	f := newFixture(t)
	plain := regtest.Must(regtest.WindowsImage("", regtest.WithBase(f.winBase["amd64"]), regtest.WithSeed("plain")))(t)
	withDesc := regtest.Must(regtest.WindowsImage("", regtest.WithBase(f.winBase["amd64"]), regtest.WithSeed("desc")))(t)
	flagRef := pushAppIndex(t, f.reg, "flag:1", plain)
	_, _, err := f.reg.PushTag("desc:1", regtest.Must(regtest.Index(regtest.Entry{Image: withDesc, Annotations: map[string]string{
		snapshot.AnnotationBaseName: f.nanoserver, snapshot.AnnotationBaseDigest: digest(t, f.winBase["amd64"]).String(),
	}}))(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Check(ctx, flagRef, testOptions()); !errors.Is(err, ErrNoBase) {
		t.Errorf("no annotation, no flag: got %v, want ErrNoBase", err)
	}
	o := testOptions()
	o.Bases = map[string]name.Reference{"windows": f.reg.MustRef(t, "base/nanoserver:ltsc2025")}
	st, err := Check(ctx, flagRef, o)
	if err != nil || st.Stale || st.Variants[0].BaseSource != SourceFlag || st.Variants[0].OldBase != "" {
		t.Fatalf("flag base, current: %v %+v", err, st)
	}
	f.moveBases(t, winNew)
	if st, err = Check(ctx, flagRef, o); err != nil || !st.Stale || st.Variants[0].Note == "" {
		t.Fatalf("flag base, stale: %v %+v", err, st)
	}
	if _, err := Rebase(ctx, flagRef, tag(t, f.reg, "flag:2"), o); !errors.Is(err, ErrNoBaseDigest) {
		t.Errorf("got %v, want ErrNoBaseDigest", err)
	}
	res, err := Rebase(ctx, f.reg.MustRef(t, "desc:1"), tag(t, f.reg, "desc:2"), testOptions())
	if err != nil || res.Variants[0].BaseSource != SourceDescriptor {
		t.Fatalf("descriptor annotations: %v", err)
	}
	idx, im := fetchIndex(t, tag(t, f.reg, "desc:2"))
	newBase := im.Manifests[0].Annotations[snapshot.AnnotationBaseDigest]
	m := regtest.Must(regtest.Must(idx.Image(im.Manifests[0].Digest))(t).Manifest())(t)
	if newBase == digest(t, f.winBase["amd64"]).String() || m.Annotations[snapshot.AnnotationBaseDigest] != newBase ||
		m.Annotations[snapshot.AnnotationBaseName] != f.nanoserver {
		t.Errorf("descriptor %v, manifest %v", im.Manifests[0].Annotations, m.Annotations)
	}
}

// TestPartialRebase: only the Windows base moved; the Linux variants and
// their attestations are kept as they are, the Windows variant gets a new
// provenance attestation.
func TestPartialRebase(t *testing.T) {
	f := newFixture(t)
	pushIndex(t, f.reg, "base/nanoserver:ltsc2025", regtest.Must(regtest.WindowsBaseImage(winNew))(t))
	res, err := Rebase(ctx, f.app, tag(t, f.reg, "app:2"), testOptions())
	if err != nil {
		t.Fatal(err)
	}
	_, im := fetchIndex(t, tag(t, f.reg, "app:2"))
	if len(im.Manifests) != 6 || im.Manifests[0].Digest != digest(t, f.amd) || im.Manifests[1].Digest != digest(t, f.arm) {
		t.Fatalf("entries %v", im.Manifests)
	}
	if res.Variants[0].Stale || res.Variants[0].NewDigest != "" || !res.Variants[2].Stale ||
		countContains(res.Notes, "describes the image before the rebase") != 1 || res.Index.Copied != 2 {
		t.Errorf("variants %+v notes %q copied %d", res.Variants, res.Notes, res.Index.Copied)
	}
	// Into another repository, the kept variants and attestations are
	// mounted; only the one new config and the new attestation are
	// uploaded.
	f.reg.ResetStats()
	other, err := Rebase(ctx, f.app, tag(t, f.reg, "other:1"), testOptions())
	if err != nil {
		t.Fatal(err)
	}
	st := f.reg.Stats()
	oidx, oim := fetchIndex(t, tag(t, f.reg, "other:1"))
	win := regtest.Must(regtest.Must(oidx.Image(oim.Manifests[2].Digest))(t).Manifest())(t)
	att := regtest.Must(regtest.Must(oidx.Image(oim.Manifests[5].Digest))(t).Manifest())(t)
	uploaded := win.Config.Size + att.Config.Size + att.Layers[0].Size
	if other.Index.Copied != 6 || st.BlobBytesReceived != uploaded {
		t.Errorf("partial rebase into another repository: %s, copied %d, new config and attestation %dB", st, other.Index.Copied, uploaded)
	}
}

func pushImage(t *testing.T, f *fixture, tag string, img v1.Image) name.Reference {
	t.Helper()
	ref, _, err := f.reg.PushTag(tag, img)
	if err != nil {
		t.Fatal(err)
	}
	return ref
}
