package regtest

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

func TestPushPullRoundTrip(t *testing.T) {
	r := New(t)
	if !strings.HasPrefix(r.Host(), "127.0.0.1:") {
		t.Fatalf("Host() = %q, want 127.0.0.1:PORT", r.Host())
	}
	idx := Must(MultiOSIndex())(t)
	ref := r.MustRef(t, "imgctl/hello:v1")
	d := MustPush(t, ref, idx)
	if want := digestOf(t, idx); d != want {
		t.Fatalf("Push returned %s, want %s", d, want)
	}

	got, err := remote.Index(ref)
	if err != nil {
		t.Fatal(err)
	}
	if gd := digestOf(t, got); gd != d {
		t.Fatalf("pulled index digest %s, want %s", gd, d)
	}
	im, err := got.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, desc := range im.Manifests {
		img, err := got.Image(desc.Digest)
		if err != nil {
			t.Fatal(err)
		}
		layers, err := img.Layers()
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range layers {
			rc, err := l.Compressed()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(io.Discard, rc); err != nil {
				t.Fatalf("reading layer of %s: %v", desc.Digest, err)
			}
			rc.Close()
		}
	}
	tags, err := remote.List(ref.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(tags) != 1 || tags[0] != "v1" {
		t.Fatalf("tags = %v, want [v1]", tags)
	}
}

func TestPushRejectsOtherTypes(t *testing.T) {
	r := New(t)
	_, err := r.Push(r.MustRef(t, "x:1"), "not an image")
	if !errors.Is(err, ErrNotPushable) {
		t.Fatalf("err = %v, want ErrNotPushable", err)
	}
}

func TestRefAndRepo(t *testing.T) {
	r := New(t)
	ref, err := r.Ref("a/b:c")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ref.String(), r.Host()+"/a/b:c"; got != want {
		t.Fatalf("Ref = %s, want %s", got, want)
	}
	if ref.Context().Scheme() != "http" {
		t.Fatalf("scheme = %s, want http", ref.Context().Scheme())
	}
	if _, err := r.Ref("UPPER:case"); err == nil {
		t.Fatal("Ref accepted an invalid repository")
	}
	repo, err := r.Repo("a/b")
	if err != nil {
		t.Fatal(err)
	}
	if repo.RegistryStr() != r.Host() {
		t.Fatalf("repo registry %s, want %s", repo.RegistryStr(), r.Host())
	}
}

// fail503 answers 503 to manifest requests of repo "broken".
func fail503(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.HasPrefix(req.URL.Path, "/v2/broken/manifests/") {
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
			return
		}
		next.ServeHTTP(w, req)
	})
}

func wantStatus(t *testing.T, err error, code int) {
	t.Helper()
	var terr *transport.Error
	if !errors.As(err, &terr) || terr.StatusCode != code {
		t.Fatalf("err = %v, want a transport error with status %d", err, code)
	}
}

func TestMiddlewareInjectsFaults(t *testing.T) {
	r := New(t, WithMiddleware(fail503))
	noRetry := remote.WithRetryStatusCodes()
	img := Must(LinuxImage("amd64"))(t)

	MustPush(t, r.MustRef(t, "fine:1"), img)
	r.ResetStats()
	_, err := Push(r.MustRef(t, "broken:1"), img, noRetry)
	wantStatus(t, err, http.StatusServiceUnavailable)
	// The client pings /v2/, then asks for the manifest and gives up.
	if got, want := r.Stats(), (Stats{Get: 1, Other: 1, Head: 1, Manifests: 1}); got != want {
		t.Fatalf("stats %v, want %v: rejected requests are counted too", got, want)
	}
}

func TestSetMiddlewareAtRuntime(t *testing.T) {
	r := New(t)
	ref := r.MustRef(t, "broken:1")
	MustPush(t, ref, Must(LinuxImage("amd64"))(t))

	r.SetMiddleware(fail503)
	_, err := remote.Head(ref, remote.WithRetryStatusCodes())
	wantStatus(t, err, http.StatusServiceUnavailable)

	r.SetMiddleware(nil)
	if _, err := remote.Head(ref); err != nil {
		t.Fatalf("after removing the middleware: %v", err)
	}
}

func TestMultipleRegistries(t *testing.T) {
	a, b := New(t), New(t)
	if a.Host() == b.Host() {
		t.Fatal("two registries share a host")
	}
	src := a.MustRef(t, "app:1")
	MustPush(t, src, Must(WindowsImage(OSVersionLTSC2025))(t))
	img, err := remote.Image(src)
	if err != nil {
		t.Fatal(err)
	}
	a.ResetStats()
	dst := b.MustRef(t, "app:1")
	MustPush(t, dst, img)

	layers, config := blobSizes(t, img)
	if got := b.Stats().BlobBytesReceived; got != layers+config {
		t.Fatalf("b received %d blob bytes, want %d", got, layers+config)
	}
	if got := a.Stats().BlobBytesSent; got != layers+config {
		t.Fatalf("a sent %d blob bytes, want %d", got, layers+config)
	}
	if m := b.Stats().Mounts; m != 0 {
		t.Fatalf("cross-registry copy mounted %d blobs", m)
	}
	if _, err := remote.Head(dst); err != nil {
		t.Fatal(err)
	}
}
