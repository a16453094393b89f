package buildtest

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// TestNextRevision: one revision up, same build; versions without a
// readable revision are errors.
func TestNextRevision(t *testing.T) {
	if got, err := NextRevision("10.0.26100.6584"); err != nil || got != "10.0.26100.6585" {
		t.Errorf("NextRevision(10.0.26100.6584) = %q, %v; want 10.0.26100.6585", got, err)
	}
	for _, bad := range []string{"10.0.26100", "10.0.x.1", ""} {
		if got, err := NextRevision(bad); err == nil {
			t.Errorf("NextRevision(%q) = %q, want an error", bad, got)
		}
	}
}

// TestPushNextRevision: the tag then holds a nanoserver-like image with
// the next revision, in the Windows layer layout.
func TestPushNextRevision(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(quietLogger())))
	defer srv.Close()
	tag := strings.TrimPrefix(srv.URL, "http://") + "/nanoserver:ltsc2025"
	next, err := PushNextRevision(tag, OSVersionLTSC2025)
	if err != nil {
		t.Fatal(err)
	}
	want, err := NextRevision(OSVersionLTSC2025)
	if err != nil || next != want {
		t.Fatalf("PushNextRevision returned %q, want %q (%v)", next, want, err)
	}
	ref, err := name.ParseReference(tag, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(ref)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != "windows" || cf.OSVersion != next {
		t.Errorf("%s holds %s %s, want windows %s", tag, cf.OS, cf.OSVersion, next)
	}
	if files := layerFiles(t, img); files["Files"] == nil || files["Hives"] == nil {
		t.Errorf("%s: the layer lacks the Windows layout", tag)
	}
}
