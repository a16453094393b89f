package regtest

import (
	"errors"
	"slices"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/imgctl/imgctl/snapshot"
)

func TestMultiOSIndexPlatforms(t *testing.T) {
	im, err := Must(MultiOSIndex())(t).IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if im.MediaType != types.OCIImageIndex {
		t.Fatalf("media type %s", im.MediaType)
	}
	want := []v1.Platform{
		{OS: "linux", Architecture: "amd64"},
		{OS: "linux", Architecture: "arm64", Variant: "v8"},
		{OS: "windows", Architecture: "amd64", OSVersion: OSVersionLTSC2025},
		{OS: "windows", Architecture: "amd64", OSVersion: OSVersionLTSC2022},
	}
	if len(im.Manifests) != 2*len(want) {
		t.Fatalf("%d manifests, want %d", len(im.Manifests), 2*len(want))
	}
	for i, p := range want {
		d := im.Manifests[i]
		if d.Platform == nil || !d.Platform.Equals(p) || d.Platform.OSVersion != p.OSVersion {
			t.Errorf("manifest %d platform %+v, want %+v", i, d.Platform, p)
		}
		att := im.Manifests[len(want)+i]
		if att.Annotations[snapshot.AnnotationReferenceDigest] != d.Digest.String() {
			t.Errorf("attestation %d refers to %s, want %s", i, att.Annotations[snapshot.AnnotationReferenceDigest], d.Digest)
		}
	}
}

func TestIndexEntryPlatforms(t *testing.T) {
	win := Must(WindowsImage(OSVersionLTSC2025, WithOSFeatures([]string{"win32k"})))(t)
	explicit := &v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.26100.1"}
	idx := Must(Index(
		Entry{Image: win},
		Entry{Image: win, OmitOSVersion: true},
		Entry{Image: win, NoPlatform: true, Annotations: map[string]string{"k": "v"}},
		Entry{Image: win, Platform: explicit},
	))(t)
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	ms := im.Manifests
	if p := ms[0].Platform; p == nil || p.OSVersion != OSVersionLTSC2025 || !slices.Equal(p.OSFeatures, []string{"win32k"}) {
		t.Errorf("filled platform %+v", p)
	}
	if p := ms[1].Platform; p == nil || p.OSVersion != "" || p.OS != "windows" {
		t.Errorf("OmitOSVersion platform %+v", p)
	}
	if ms[2].Platform != nil || ms[2].Annotations["k"] != "v" {
		t.Errorf("NoPlatform descriptor %+v", ms[2])
	}
	if p := ms[3].Platform; p == nil || p.OSVersion != "10.0.26100.1" {
		t.Errorf("explicit platform %+v", p)
	}
	if ms[0].MediaType != types.OCIManifestSchema1 || ms[0].Digest != digestOf(t, win) || ms[0].ArtifactType != "" {
		t.Errorf("descriptor %+v", ms[0])
	}

	if _, err := Index(Entry{}); !errors.Is(err, ErrBadEntry) {
		t.Errorf("empty entry: %v", err)
	}
	nested := Must(Index(Entry{Index: idx}))(t)
	nm, err := nested.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if nm.Manifests[0].MediaType != types.OCIImageIndex || nm.Manifests[0].Platform != nil {
		t.Errorf("nested index descriptor %+v", nm.Manifests[0])
	}
	r := New(t)
	ref := r.MustRef(t, "nested:1")
	MustPush(t, ref, nested)
	if _, err := remote.Index(ref); err != nil {
		t.Fatal(err)
	}
}
