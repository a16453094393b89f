package index

import (
	"errors"
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/registry"
)

// TestTagImmutable refuses an existing tag, leaves a tag that already
// points at the index alone, and overwrites only with Force.
func TestTagImmutable(t *testing.T) {
	reg := regtest.New(t)
	lin := pushed(t, reg, "src:l", regtest.Must(regtest.LinuxImage("amd64"))(t))
	win := pushed(t, reg, "src:w", regtest.Must(regtest.WindowsImage(regtest.OSVersionLTSC2025))(t))
	target := tag(t, reg, "app:1")
	first, err := Create(ctx, target, []name.Reference{lin}, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	again, err := Create(ctx, target, []name.Reference{lin}, testOptions())
	if err != nil || again.Pushed || again.Digest != first.Digest {
		t.Errorf("re-run of the same merge: %v pushed=%v", err, again != nil && again.Pushed)
	}
	reg.ResetStats()
	if _, err := Create(ctx, target, []name.Reference{lin, win}, testOptions()); !errors.Is(err, registry.ErrTagExists) {
		t.Fatalf("got %v, want ErrTagExists", err)
	}
	if st := reg.Stats(); st.Put != 0 {
		t.Errorf("refused merge wrote: %s", st)
	}
	o := testOptions()
	o.Force = true
	res, err := Create(ctx, target, []name.Reference{lin, win}, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, d := fetchIndex(t, target); d != res.Digest {
		t.Errorf("forced tag points at %s, want %s", d, res.Digest)
	}
}

// TestCrossRegistry streams blobs from another registry, keeps digests and
// os.version, and a second merge uploads only the index.
func TestCrossRegistry(t *testing.T) {
	src, dst := regtest.New(t), regtest.New(t)
	win := regtest.Must(regtest.WindowsImage(regtest.OSVersionLTSC2022))(t)
	multi := regtest.Must(regtest.MultiOSIndex())(t)
	srcs := []name.Reference{pushed(t, src, "w:1", win), pushed(t, src, "m:1", multi)}
	src.ResetStats()
	o := testOptions()
	o.Prefer = PreferNewest // win duplicates the ltsc2022 variant of multi
	o.Jobs = 2
	res, err := Create(ctx, tag(t, dst, "app:1"), srcs, o)
	if err != nil {
		t.Fatal(err)
	}
	ss, ds := src.Stats(), dst.Stats()
	t.Logf("source: %s", ss)
	t.Logf("target: %s", ds)
	if ss.BlobBytesSent == 0 || ds.BlobBytesReceived == 0 || ds.Mounts != 0 || src.Stats().Put != 0 {
		t.Errorf("blobs not streamed")
	}
	im, d := fetchIndex(t, tag(t, dst, "app:1"))
	if d != res.Digest {
		t.Errorf("digest %s, want %s", d, res.Digest)
	}
	srcIdx, _ := fetchIndex(t, srcs[1])
	for _, want := range srcIdx.Manifests {
		if !slices.ContainsFunc(im.Manifests, func(got v1.Descriptor) bool { return got.Digest == want.Digest }) {
			t.Errorf("child %s missing or re-serialised", want.Digest)
		}
	}
	if got := platforms(im); got[3] != "windows/amd64:"+regtest.OSVersionLTSC2022 {
		t.Errorf("platforms %v", got)
	}
	dst.ResetStats()
	if _, err := Create(ctx, tag(t, dst, "app:2"), srcs, o); err != nil {
		t.Fatal(err)
	}
	if st := dst.Stats(); st.Put != 1 || st.BlobBytesReceived != 0 {
		t.Errorf("second merge uploaded children again: %s", st)
	}
}

// TestHalfwayFailure: a blob of the second source fails; nothing is tagged,
// and after the fault clears a re-run publishes the same digest.
func TestHalfwayFailure(t *testing.T) {
	src, dst := regtest.New(t), regtest.New(t)
	lin := regtest.Must(regtest.LinuxImage("amd64"))(t)
	win := regtest.Must(regtest.WindowsImage(regtest.OSVersionLTSC2025))(t)
	srcs := []name.Reference{pushed(t, src, "l:1", lin), pushed(t, src, "w:1", win)}
	ls := regtest.Must(win.Layers())(t)
	src.SetMiddleware(failing(digest(t, ls[len(ls)-1]).String()))
	target := tag(t, dst, "app:1")
	plan, err := Create(ctx, target, srcs, Options{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Create(ctx, target, srcs, testOptions()); err == nil {
		t.Fatal("merge succeeded with a failing source")
	}
	if tagExists(t, target) {
		t.Fatal("a failed merge left the tag")
	}
	src.SetMiddleware(nil)
	res, err := Create(ctx, target, srcs, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if _, d := fetchIndex(t, target); d != plan.Digest || res.Digest != plan.Digest {
		t.Errorf("re-run digest %s, want %s", d, plan.Digest)
	}
}

// TestMountRefused: a registry that ignores mounts still gets every blob,
// streamed by the Pusher after the direct client cancels its upload.
func TestMountRefused(t *testing.T) {
	reg := regtest.New(t)
	srcs := []name.Reference{pushed(t, reg, "src:l", regtest.Must(regtest.LinuxImage("amd64"))(t))}
	reg.SetMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				r.URL.RawQuery = "" // ignore mount: start a plain upload
			}
			next.ServeHTTP(w, r)
		})
	})
	reg.ResetStats()
	target := tag(t, reg, "app:1")
	if _, err := Create(ctx, target, srcs, testOptions()); err != nil {
		t.Fatal(err)
	}
	if st := reg.Stats(); st.Mounts != 0 || st.BlobBytesReceived == 0 {
		t.Errorf("blobs not streamed: %s", st)
	}
	if _, err := fetchIndexErr(target); err != nil {
		t.Error(err)
	}
}
