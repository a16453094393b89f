package regtest

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/remote"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		path string
		kind kind
		repo string
	}{
		{"/v2/", kindOther, ""},
		{"/v2/a/b/manifests/latest", kindManifest, "a/b"},
		{"/v2/a/blobs/sha256:abc", kindBlob, "a"},
		{"/v2/a/blobs/uploads/", kindUpload, "a"},
		{"/v2/a/blobs/uploads/123", kindUpload, "a"},
		{"/v2/a/tags/list", kindTags, "a"},
		{"/v2/a/referrers/sha256:abc", kindOther, ""},
		{"/v2/manifests/manifests/x", kindManifest, "manifests"},
	} {
		k, repo := classify(tc.path)
		if k != tc.kind || repo != tc.repo {
			t.Errorf("classify(%q) = %v, %q; want %v, %q", tc.path, k, repo, tc.kind, tc.repo)
		}
	}
}

func TestStatsPushHeadPull(t *testing.T) {
	r := New(t)
	img := Must(LinuxImage("arm64"))(t)
	ref := r.MustRef(t, "stats:1")
	MustPush(t, ref, img)

	layers, config := blobSizes(t, img)
	s := r.Stats()
	if s.BlobBytesReceived != layers+config {
		t.Fatalf("received %d, want %d (%v)", s.BlobBytesReceived, layers+config, s)
	}
	if s.Put < 1 || s.Manifests < 1 || s.Uploads < 2 || s.Mounts != 0 || s.BlobBytesSent != 0 {
		t.Fatalf("unexpected push stats %v", s)
	}
	if s.Total() != s.Manifests+s.Blobs+s.Uploads+s.Tags+s.Other {
		t.Fatalf("methods and kinds disagree: %v", s)
	}

	r.ResetStats()
	if _, err := remote.Head(ref); err != nil {
		t.Fatal(err)
	}
	if got, want := r.Stats(), (Stats{Get: 1, Other: 1, Head: 1, Manifests: 1}); got != want {
		// Every remote call pings GET /v2/ before the HEAD.
		t.Fatalf("after HEAD: %v, want %v", got, want)
	}

	r.ResetStats()
	pulled, err := remote.Image(ref)
	if err != nil {
		t.Fatal(err)
	}
	ls, err := pulled.Layers()
	if err != nil {
		t.Fatal(err)
	}
	rc, err := ls[0].Compressed()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, rc); err != nil {
		t.Fatal(err)
	}
	rc.Close()
	if got := r.Stats().BlobBytesSent; got != layers {
		t.Fatalf("sent %d layer bytes, want %d", got, layers)
	}
	if !strings.Contains(r.Stats().String(), "GET=") {
		t.Fatalf("String() = %q", r.Stats().String())
	}
}

func TestStatsCrossRepoMount(t *testing.T) {
	r := New(t)
	src := r.MustRef(t, "team/src:1")
	MustPush(t, src, Must(WindowsImage(OSVersionLTSC2022))(t))
	img, err := remote.Image(src)
	if err != nil {
		t.Fatal(err)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}

	r.ResetStats()
	dst := r.MustRef(t, "team/dst:1")
	MustPush(t, dst, img)
	s := r.Stats()
	if want := len(m.Layers) + 1; s.Mounts != want {
		t.Fatalf("mounts = %d, want %d (layers and config): %v", s.Mounts, want, s)
	}
	if s.BlobBytesReceived != 0 || s.Patch != 0 {
		t.Fatalf("a mount must not upload bytes: %v", s)
	}

	// The mounted blobs are served from the new repository.
	got, err := remote.Image(dst)
	if err != nil {
		t.Fatal(err)
	}
	ls, err := got.Layers()
	if err != nil {
		t.Fatal(err)
	}
	rc, err := ls[0].Compressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if _, err := io.Copy(io.Discard, rc); err != nil {
		t.Fatal(err)
	}
}

func TestBlobsAreScopedToRepositories(t *testing.T) {
	r := New(t)
	img := Must(LinuxImage("amd64"))(t)
	MustPush(t, r.MustRef(t, "one:1"), img)
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	for repo, want := range map[string]int{"one": http.StatusOK, "two": http.StatusNotFound} {
		resp, err := http.Head(r.URL() + "/v2/" + repo + "/blobs/" + m.Layers[0].Digest.String())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("HEAD blob in %s: %d, want %d", repo, resp.StatusCode, want)
		}
	}
}
