package rebase

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/snapshot"
	"github.com/imgctl/imgctl/verify"
)

// TestRebaseMovesEveryVariant is the monthly job: the Windows variant moves
// from 26100.33438 to 26100.33674 and both Linux variants to a new base; app
// layers keep their descriptors, base layers are replaced, configs follow,
// and no layer byte passes through the client.
func TestRebaseMovesEveryVariant(t *testing.T) {
	f := newFixture(t)
	f.moveBases(t, winNew)
	newWin := regtest.Must(regtest.WindowsBaseImage(winNew))(t)
	newLin := linuxBases(t, "distroless-2")
	var log blobLog
	f.reg.SetMiddleware(log.middleware)
	f.reg.ResetStats()
	target := tag(t, f.reg, "app:2")
	res, err := Rebase(ctx, f.app, target, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	st := f.reg.Stats()
	log.mu.Lock()
	read, written := slices.Clone(log.read), slices.Clone(log.written)
	log.mu.Unlock()
	t.Logf("rebase of 3 variants: %s", st)
	idx, im := fetchIndex(t, target)
	// Each variant's BuildKit attestation is replaced by imgctl's
	// provenance (TestRebaseProvenance checks them).
	if !res.Pushed || len(im.Manifests) != 6 || digest(t, idx) != res.Index.Digest {
		t.Fatalf("pushed=%v, %d entries (want 3 variants and 3 attestations)", res.Pushed, len(im.Manifests))
	}
	if n := countContains(res.Notes, "describes the image before the rebase"); n != 3 {
		t.Errorf("notes %q: want 3 replaced attestations", res.Notes)
	}
	want := map[string][2]v1.Image{ // platform -> app, new base
		"windows/amd64:" + winNew: {f.win, newWin},
		"linux/amd64":             {f.amd, newLin["amd64"]},
		"linux/arm64/v8":          {f.arm, newLin["arm64"]},
	}
	var newConfigs int64
	for _, d := range im.Manifests {
		if snapshot.IsAttestation(d) {
			// uploaded too: the attestation's config and statement
			m := regtest.Must(regtest.Must(idx.Image(d.Digest))(t).Manifest())(t)
			newConfigs += m.Config.Size + m.Layers[0].Size
			continue
		}
		w, ok := want[formatDesc(d)]
		if !ok {
			t.Errorf("unexpected entry %s", formatDesc(d))
			continue
		}
		m, cf := checkRebased(t, idx, d, w[0], w[1])
		newConfigs += m.Config.Size
		if d.Platform.OS == "windows" && (cf.OSVersion != winNew || d.Platform.OSVersion != winNew) {
			t.Errorf("os.version: descriptor %s, config %s, want %s", d.Platform.OSVersion, cf.OSVersion, winNew)
		}
	}
	// Zero layer bytes: every blob read is a config, and only the new configs
	// and attestations were uploaded; base layers were mounted (app layers
	// are already in app).
	layers := layerDigests(t, f.win, f.amd, f.arm, newWin, newLin["amd64"], newLin["arm64"])
	for _, d := range read {
		if layers[d] {
			t.Errorf("layer %s was read through the client", d)
		}
	}
	for _, d := range written {
		if layers[d] {
			t.Errorf("layer %s was uploaded through the client", d)
		}
	}
	if st.BlobBytesReceived != newConfigs || st.Mounts != 3 || len(read) != 9 {
		t.Errorf("received %dB (new configs %dB), %d mounts (want 3), %d blobs read (want 9 configs)",
			st.BlobBytesReceived, newConfigs, st.Mounts, len(read))
	}
	rep := verify.Evaluate(target.String(), res.Snapshot(), verify.Options{Targets: res.Targets()})
	snap := regtest.Must(snapshot.LoadIndex(ctx, idx, 4))(t)
	if back := verify.Evaluate(target.String(), snap, verify.Options{Targets: res.Targets()}); !rep.Passed || !back.Passed {
		t.Errorf("verify: in memory %+v, read back %+v", rep.Findings, back.Findings)
	}
}

// checkRebased checks one rebased variant against its app image and new
// base and returns its manifest and config.
func checkRebased(t *testing.T, idx v1.ImageIndex, d v1.Descriptor, app, base v1.Image) (*v1.Manifest, *v1.ConfigFile) {
	t.Helper()
	img := regtest.Must(idx.Image(d.Digest))(t)
	m, cf := regtest.Must(img.Manifest())(t), regtest.Must(img.ConfigFile())(t)
	am, acf := regtest.Must(app.Manifest())(t), regtest.Must(app.ConfigFile())(t)
	bm, bcf := regtest.Must(base.Manifest())(t), regtest.Must(base.ConfigFile())(t)
	n := len(bm.Layers)
	if !sameJSON(t, m.Layers[:n], bm.Layers) || !sameJSON(t, m.Layers[n:], am.Layers[len(am.Layers)-1:]) {
		t.Errorf("%s: layers %v", formatDesc(d), m.Layers)
	}
	wantIDs := append(slices.Clone(bcf.RootFS.DiffIDs), acf.RootFS.DiffIDs[len(acf.RootFS.DiffIDs)-1])
	if !slices.Equal(cf.RootFS.DiffIDs, wantIDs) || cf.History[0].CreatedBy != bcf.History[0].CreatedBy ||
		len(cf.History) != len(acf.History) || !reflect.DeepEqual(cf.History[n:], acf.History[n:]) {
		t.Errorf("%s: diff_ids %v history %v", formatDesc(d), cf.RootFS.DiffIDs, cf.History)
	}
	if got := m.Annotations[snapshot.AnnotationBaseDigest]; got != digest(t, base).String() || m.MediaType != am.MediaType {
		t.Errorf("%s: base.digest %s, want %s; media type %s", formatDesc(d), got, digest(t, base), m.MediaType)
	}
	if !reflect.DeepEqual(cf.Config, acf.Config) || !cf.Created.Equal(acf.Created.Time) {
		t.Errorf("%s: the app's config changed", formatDesc(d))
	}
	return m, cf
}

// TestRebaseTwiceIsNoop: rebasing the result, or repeating the rebase,
// pushes nothing.
func TestRebaseTwiceIsNoop(t *testing.T) {
	f := newFixture(t)
	f.moveBases(t, winNew)
	first, err := Rebase(ctx, f.app, tag(t, f.reg, "app:2"), testOptions())
	if err != nil {
		t.Fatal(err)
	}
	f.reg.ResetStats()
	res, err := Rebase(ctx, tag(t, f.reg, "app:2"), tag(t, f.reg, "app:3"), testOptions())
	if err != nil || res.Pushed || res.Stale || res.Index != nil || countPrefix(res.Notes, "every variant") != 1 {
		t.Fatalf("second run: %v %+v", err, res)
	}
	// The repeated run takes the provenance the first one wrote.
	again, err := Rebase(ctx, f.app, tag(t, f.reg, "app:2"), testOptions())
	if err != nil || again.Pushed || again.Index.Digest != first.Index.Digest || again.Variants[2].Provenance != first.Variants[2].Provenance {
		t.Fatalf("repeated run: %v", err)
	}
	if st := f.reg.Stats(); st.Put != 0 || st.Post != 0 {
		t.Errorf("no-op runs wrote: %s", st)
	}
	if _, err := Rebase(ctx, f.app, tag(t, f.reg, "app:1"), testOptions()); !errors.Is(err, registry.ErrTagExists) {
		t.Errorf("rebase onto an existing tag: got %v, want ErrTagExists", err)
	}
}

// TestRebaseRefusesForeignLayers: an image whose layers do not start with
// the base its annotations name is refused, naming the variant.
func TestRebaseRefusesForeignLayers(t *testing.T) {
	f := newFixture(t)
	other := regtest.Must(regtest.WindowsBaseImage(winOld, regtest.WithSeed("another base")))(t)
	lie := regtest.Must(regtest.WindowsImage("", regtest.WithBase(other), regtest.WithAnnotations(map[string]string{
		snapshot.AnnotationBaseName: f.nanoserver, snapshot.AnnotationBaseDigest: digest(t, f.winBase["amd64"]).String(),
	})))(t)
	src := pushAppIndex(t, f.reg, "liar:1", f.amd, lie)
	f.moveBases(t, winNew)
	f.reg.ResetStats()
	_, err := Rebase(ctx, src, tag(t, f.reg, "liar:2"), testOptions())
	if !errors.Is(err, ErrBaseMismatch) || !strings.Contains(err.Error(), "windows/amd64:"+winOld) {
		t.Fatalf("got %v, want ErrBaseMismatch naming the Windows variant", err)
	}
	if st := f.reg.Stats(); st.Put != 0 || st.Post != 0 {
		t.Errorf("a refused rebase wrote: %s", st)
	}
}

// TestRebaseBuildChange: a base that moved to another Windows build is
// refused without AllowBuildChange and followed with it.
func TestRebaseBuildChange(t *testing.T) {
	f := newFixture(t)
	f.moveBases(t, winBuild)
	st, err := Check(ctx, f.app, testOptions())
	if err != nil || !st.Stale || !st.Variants[2].BuildChange || st.Variants[2].NewOSVersion != winBuild {
		t.Fatalf("check: %v %+v", err, st)
	}
	if _, err := Rebase(ctx, f.app, tag(t, f.reg, "app:2"), testOptions()); !errors.Is(err, ErrBuildChange) {
		t.Fatalf("got %v, want ErrBuildChange", err)
	}
	o := testOptions()
	o.AllowBuildChange = true
	res, err := Rebase(ctx, f.app, tag(t, f.reg, "app:2"), o)
	if err != nil {
		t.Fatal(err)
	}
	_, im := fetchIndex(t, tag(t, f.reg, "app:2"))
	if got := formatDesc(im.Manifests[2]); got != "windows/amd64:"+winBuild || countContains(res.Notes, "moved from build") != 1 {
		t.Errorf("entry %s, notes %q", got, res.Notes)
	}
}

// TestRebaseRecordedList: a Windows variant whose base.digest is the
// digest of a Docker manifest list with several builds, which is what
// imgctl build records for a base tag like mcr.microsoft.com's, is current
// while the list is, and moves onto the new child of its own build (not the
// first child of the list) when the list moves.
func TestRebaseRecordedList(t *testing.T) {
	reg := regtest.New(t)
	const win2022, win2022New = regtest.OSVersionLTSC2022, "10.0.20348.9999"
	pushList := func(versions ...string) (v1.Hash, []v1.Image) {
		var es []regtest.Entry
		var imgs []v1.Image
		for _, osv := range versions {
			img := regtest.Must(regtest.WindowsBaseImage(osv))(t)
			imgs = append(imgs, img)
			es = append(es, regtest.Entry{Image: img})
		}
		list := mutate.IndexMediaType(regtest.Must(regtest.Index(es...))(t), types.DockerManifestList)
		_, d, err := reg.PushTag("base/nanoserver:multi", list)
		if err != nil {
			t.Fatal(err)
		}
		return d, imgs
	}
	oldList, oldBases := pushList(win2022, winOld)
	base := reg.Host() + "/base/nanoserver:multi"
	app := regtest.Must(regtest.WindowsImage("", regtest.WithBase(oldBases[1]), regtest.WithSeed("app"), regtest.WithAnnotations(map[string]string{
		snapshot.AnnotationBaseName: base, snapshot.AnnotationBaseDigest: oldList.String(),
	})))(t)
	src := pushAppIndex(t, reg, "app:1", app)
	st, err := Check(ctx, src, testOptions())
	if err != nil || st.Stale || st.Variants[0].OldBase != oldList.String() || st.Variants[0].NewBase != digest(t, oldBases[1]).String() {
		t.Fatalf("current list: %v %+v", err, st)
	}
	_, newBases := pushList(win2022New, winNew)
	res, err := Rebase(ctx, src, tag(t, reg, "app:2"), testOptions())
	if err != nil || !res.Pushed {
		t.Fatalf("rebase: %v %+v", err, res)
	}
	idx, im := fetchIndex(t, tag(t, reg, "app:2"))
	if got := formatDesc(im.Manifests[0]); got != "windows/amd64:"+winNew {
		t.Errorf("entry %s, want windows/amd64:%s", got, winNew)
	}
	m, _ := checkRebased(t, idx, im.Manifests[0], app, newBases[1])
	if got := m.Annotations[snapshot.AnnotationBaseDigest]; got != digest(t, newBases[1]).String() {
		t.Errorf("base.digest %s, want the new ltsc2025 child %s", got, digest(t, newBases[1]))
	}
}

// TestStaleWithOldRevisionStillListed: a base index that lists the new
// revision of the build first and the variant's own, older revision after
// it (both are of one build) makes the variant stale, onto the new one:
// the current image is the first of the build, not the variant's exact
// revision.
func TestStaleWithOldRevisionStillListed(t *testing.T) {
	f := newFixture(t)
	pushIndex(t, f.reg, "base/nanoserver:ltsc2025", regtest.Must(regtest.WindowsBaseImage(winNew))(t), regtest.Must(regtest.WindowsBaseImage(winOld))(t))
	st, err := Check(ctx, f.app, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range st.Variants {
		if strings.HasPrefix(v.Platform, "windows") && (!v.Stale || v.NewOSVersion != winNew) {
			t.Fatalf("windows variant on %s, base lists %s then %s: stale %t, new %s; want stale onto %s", v.OldOSVersion, winNew, winOld, v.Stale, v.NewOSVersion, winNew)
		}
	}
}
