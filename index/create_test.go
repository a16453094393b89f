package index

import (
	"slices"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/snapshot"
)

// TestCreateSingleImagesSameRegistry merges single images from another
// repository: os.version comes from each config, blobs are mounted and none
// passes through the client, and each child is PUT once.
func TestCreateSingleImagesSameRegistry(t *testing.T) {
	reg := regtest.New(t)
	l64 := regtest.Must(regtest.LinuxImage("amd64"))(t)
	arm := regtest.Must(regtest.LinuxImage("arm64"))(t)
	w22 := regtest.Must(regtest.WindowsImage(regtest.OSVersionLTSC2022))(t)
	w25 := regtest.Must(regtest.WindowsImage(regtest.OSVersionLTSC2025, regtest.WithOSFeatures([]string{"win32k"})))(t)
	srcs := []name.Reference{
		pushed(t, reg, "src:w22", w22), pushed(t, reg, "src:amd64", l64),
		pushed(t, reg, "src:w25", w25), pushed(t, reg, "src:arm64", arm),
	}
	reg.ResetStats()
	target := tag(t, reg, "app:1")
	o := testOptions()
	o.Annotations = map[string]string{"org.opencontainers.image.version": "1.0"}
	res, err := Create(ctx, target, srcs, o)
	if err != nil {
		t.Fatal(err)
	}
	st := reg.Stats()
	t.Logf("4 single images, same registry: %s", st)
	var configs int64
	for _, img := range []v1.Image{l64, arm, w22, w25} {
		m := regtest.Must(img.Manifest())(t)
		configs += m.Config.Size
	}
	// Single images are read from their configs; no layer passes through.
	if st.Mounts == 0 || st.BlobBytesReceived != 0 || st.BlobBytesSent != configs {
		t.Errorf("blobs passed through the client (configs are %dB): %s", configs, st)
	}
	if st.Put != 5 {
		t.Errorf("PUTs = %d, want 4 children and the index", st.Put)
	}
	im, d := fetchIndex(t, target)
	if d != res.Digest || !res.Pushed || res.Copied != 4 {
		t.Errorf("result %+v, registry digest %s", res, d)
	}
	want := []string{"linux/amd64", "linux/arm64/v8", "windows/amd64:" + regtest.OSVersionLTSC2025, "windows/amd64:" + regtest.OSVersionLTSC2022}
	if got := platforms(im); !slices.Equal(got, want) {
		t.Errorf("platforms %v, want %v", got, want)
	}
	if im.MediaType != types.OCIImageIndex || im.Annotations["org.opencontainers.image.version"] != "1.0" {
		t.Errorf("index media type %s annotations %v", im.MediaType, im.Annotations)
	}
	if f := im.Manifests[2].Platform.OSFeatures; !slices.Equal(f, []string{"win32k"}) {
		t.Errorf("os.features %v", f)
	}
	if im.Manifests[3].Digest != digest(t, w22) || im.Manifests[0].Digest != digest(t, l64) {
		t.Error("child digests changed")
	}
}

// TestCreateRequestCount measures merging three single-platform images in
// one registry, from another repository and from the target repository.
// Each bound includes the HEAD with which registry.Publish reads the tag
// back after its PUT.
func TestCreateRequestCount(t *testing.T) {
	for _, tc := range []struct {
		repo    string
		maxReqs int
	}{{"src", 23}, {"app", 10}} {
		reg := regtest.New(t)
		srcs := []name.Reference{
			pushed(t, reg, tc.repo+":amd64", regtest.Must(regtest.LinuxImage("amd64"))(t)),
			pushed(t, reg, tc.repo+":arm64", regtest.Must(regtest.LinuxImage("arm64"))(t)),
			pushed(t, reg, tc.repo+":win", regtest.Must(regtest.WindowsImage(regtest.OSVersionLTSC2025))(t)),
		}
		reg.ResetStats()
		if _, err := Create(ctx, tag(t, reg, "app:1"), srcs, testOptions()); err != nil {
			t.Fatal(err)
		}
		st := reg.Stats()
		t.Logf("3 single images from repo %q: %s", tc.repo, st)
		if st.BlobBytesReceived != 0 || (tc.repo == "src" && st.Mounts != 7) {
			t.Errorf("blobs not mounted: %s", st)
		}
		if st.Total() > tc.maxReqs {
			t.Errorf("repo %s: %d requests, want at most %d", tc.repo, st.Total(), tc.maxReqs)
		}
		if tc.repo == "app" && (st.Put != 1 || st.Mounts != 0) {
			t.Errorf("sources in the target repository were copied: %s", st)
		}
	}
}

// TestCreateIndexSources keeps descriptor platforms, annotations and
// attestations of index sources, fills a lost os.version from the config and
// skips children the target already has.
func TestCreateIndexSources(t *testing.T) {
	reg := regtest.New(t)
	multi := regtest.Must(regtest.MultiOSIndex())(t)
	w19 := regtest.Must(regtest.WindowsImage("10.0.17763.6893"))(t)
	att := regtest.Must(regtest.AttestationEntry(w19))(t)
	lost := regtest.Must(regtest.Index(
		regtest.Entry{Image: w19, OmitOSVersion: true, Annotations: map[string]string{"com.example/k": "v"}}, att))(t)
	srcs := []name.Reference{pushed(t, reg, "lost:1", lost), pushed(t, reg, "multi:1", multi)}
	target := tag(t, reg, "app:1")
	res, err := Create(ctx, target, srcs, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	im, _ := fetchIndex(t, target)
	want := []string{"linux/amd64", "linux/arm64/v8", "windows/amd64:" + regtest.OSVersionLTSC2025,
		"windows/amd64:" + regtest.OSVersionLTSC2022, "windows/amd64:10.0.17763.6893",
		"attestation", "attestation", "attestation", "attestation", "attestation"}
	if got := platforms(im); !slices.Equal(got, want) {
		t.Errorf("platforms %v, want %v", got, want)
	}
	for i := range 5 {
		a := im.Manifests[5+i]
		if a.Annotations[snapshot.AnnotationReferenceDigest] != im.Manifests[i].Digest.String() || a.Platform.OS != "unknown" {
			t.Errorf("attestation %d refers to %s, want %s", i, a.Annotations[snapshot.AnnotationReferenceDigest], im.Manifests[i].Digest)
		}
	}
	if im.Manifests[4].Annotations["com.example/k"] != "v" {
		t.Errorf("descriptor annotations lost: %v", im.Manifests[4].Annotations)
	}
	if len(res.Notes) != 1 {
		t.Errorf("notes %q, want one about the filled os.version", res.Notes)
	}
	// Index sources with descriptor platforms: no blob passes through the
	// client at all.
	reg.ResetStats()
	if _, err := Create(ctx, tag(t, reg, "other:1"), srcs[1:], testOptions()); err != nil {
		t.Fatal(err)
	}
	first := reg.Stats()
	if first.Mounts == 0 || first.BlobBytesReceived != 0 || first.BlobBytesSent != 0 || first.Head != 2 {
		t.Errorf("blobs passed through the client, or a HEAD per child: %s", first)
	}
	// A second merge into the same repository asks nothing per child
	// (within one registry a HEAD would cost what the mounts cost): its
	// blobs are mounted again, no byte passes through the client, and the
	// only HEADs are the tag check and the read-back.
	reg.ResetStats()
	if _, err := Create(ctx, tag(t, reg, "app:2"), srcs[1:], testOptions()); err != nil {
		t.Fatal(err)
	}
	if st := reg.Stats(); st.Head != 2 || st.BlobBytesSent != 0 || st.BlobBytesReceived != 0 || st.Mounts != first.Mounts || st.Put != first.Put {
		t.Errorf("second merge: %s; first: %s", st, first)
	}
}

// TestCreateDeterministicAndDryRun: the order of sources does not change the
// digest, and a dry run writes nothing.
func TestCreateDeterministicAndDryRun(t *testing.T) {
	reg := regtest.New(t)
	a := pushed(t, reg, "src:a", regtest.Must(regtest.MultiOSIndex())(t))
	b := pushed(t, reg, "src:b", regtest.Must(regtest.WindowsImage("10.0.17763.6893"))(t))
	c := pushed(t, reg, "src:c", regtest.Must(regtest.LinuxImage("s390x"))(t))
	o := testOptions()
	o.DryRun = true
	reg.ResetStats()
	r1, err := Create(ctx, tag(t, reg, "app:1"), []name.Reference{a, b, c}, o)
	if err != nil {
		t.Fatal(err)
	}
	if st := reg.Stats(); st.Put != 0 || st.Post != 0 || st.Patch != 0 || r1.Pushed {
		t.Errorf("dry run wrote: %s", st)
	}
	if tagExists(t, tag(t, reg, "app:1")) {
		t.Error("dry run created the tag")
	}
	r2, err := Create(ctx, tag(t, reg, "app:1"), []name.Reference{c, b, a}, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if r1.Digest != r2.Digest || string(r1.Raw) != string(r2.Raw) {
		t.Errorf("digest depends on source order: %s vs %s", r1.Digest, r2.Digest)
	}
	if got := platforms(r2.Manifest); got[2] != "linux/s390x" || got[5] != "windows/amd64:10.0.17763.6893" {
		t.Errorf("order %v", got)
	}
}
