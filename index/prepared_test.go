package index

import (
	"errors"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/registry"
)

// preparedOf describes img as a prepared child whose layers are in from and
// whose config is held in memory.
func preparedOf(t *testing.T, img v1.Image, from name.Repository) Prepared {
	t.Helper()
	raw := regtest.Must(img.RawManifest())(t)
	m := regtest.Must(img.Manifest())(t)
	d := regtest.Must(partial.Descriptor(img))(t)
	d.Platform = regtest.Must(img.ConfigFile())(t).Platform()
	p := Prepared{Descriptor: *d, Manifest: raw}
	p.Blobs = append(p.Blobs, Blob{Descriptor: m.Config, Data: regtest.Must(img.RawConfigFile())(t)})
	for _, l := range m.Layers {
		p.Blobs = append(p.Blobs, Blob{Descriptor: l, From: from})
	}
	return p
}

// TestPublishPrepared mounts layers from their repository, uploads the
// in-memory config, orders entries as Create does, and keeps the tag rule.
func TestPublishPrepared(t *testing.T) {
	reg := regtest.New(t)
	win := regtest.Must(regtest.WindowsImage(regtest.OSVersionLTSC2025))(t)
	lin := regtest.Must(regtest.LinuxImage("amd64"))(t)
	pushed(t, reg, "src:w", win)
	pushed(t, reg, "src:l", lin)
	src := regtest.Must(reg.Repo("src"))(t)
	children := []Prepared{preparedOf(t, win, src), preparedOf(t, lin, src)}
	reg.ResetStats()
	o := testOptions()
	o.DryRun = true
	plan, err := PublishPrepared(ctx, tag(t, reg, "app:1"), children, map[string]string{"k": "v"}, o)
	if err != nil || plan.Pushed {
		t.Fatalf("dry run: %v", err)
	}
	res, err := PublishPrepared(ctx, tag(t, reg, "app:1"), children, map[string]string{"k": "v"}, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	st := reg.Stats()
	var configs int64
	for _, img := range []v1.Image{win, lin} {
		configs += regtest.Must(img.Manifest())(t).Config.Size
	}
	if st.Mounts != 3 || st.BlobBytesSent != 0 || st.BlobBytesReceived != configs || res.Copied != 2 || !res.Pushed || res.Digest != plan.Digest {
		t.Errorf("publish: %s, copied %d", st, res.Copied)
	}
	im, d := fetchIndex(t, tag(t, reg, "app:1"))
	if got := platforms(im); d != res.Digest || got[0] != "linux/amd64" || im.Annotations["k"] != "v" {
		t.Errorf("index %v, digest %s want %s", got, d, res.Digest)
	}
	children[0].Manifest = append([]byte(" "), children[0].Manifest...)
	if _, err := PublishPrepared(ctx, tag(t, reg, "app:2"), children, nil, testOptions()); !errors.Is(err, ErrBadPrepared) {
		t.Errorf("got %v, want ErrBadPrepared", err)
	}
	children = children[1:]
	if _, err := PublishPrepared(ctx, tag(t, reg, "app:1"), children, nil, testOptions()); !errors.Is(err, registry.ErrTagExists) {
		t.Errorf("got %v, want ErrTagExists", err)
	}
}

// TestPublishPreparedPresent: children already in the target repository
// (Present, as imgctl build's are) are neither read, checked nor
// uploaded, and with TagChecked the tag is not checked again: the registry
// sees the handshake, one PUT of the index and the one HEAD with which
// registry.Publish reads the tag back.
func TestPublishPreparedPresent(t *testing.T) {
	reg := regtest.New(t)
	win := regtest.Must(regtest.WindowsImage(regtest.OSVersionLTSC2025))(t)
	lin := regtest.Must(regtest.LinuxImage("arm64"))(t)
	app := tag(t, reg, "app:1")
	var children []Prepared
	for _, img := range []v1.Image{win, lin} {
		pushed(t, reg, "app@"+regtest.Must(img.Digest())(t).String(), img)
		p := preparedOf(t, img, app.Context())
		p.Manifest, p.Blobs, p.Present = nil, nil, true
		children = append(children, p)
	}
	reg.ResetStats()
	o := testOptions()
	o.TagChecked = true
	res, err := PublishPrepared(ctx, app, children, nil, o)
	if err != nil {
		t.Fatal(err)
	}
	st := reg.Stats()
	if st.Put != 1 || st.Head != 1 || st.Manifests != 2 || st.Uploads != 0 || res.Copied != 0 || !res.Pushed {
		t.Errorf("publish: %s, copied %d", st, res.Copied)
	}
	im, _ := fetchIndex(t, app)
	if got := platforms(im); len(got) != 2 || got[0] != "linux/arm64/v8" || im.Manifests[1].Platform.OSVersion != regtest.OSVersionLTSC2025 {
		t.Errorf("index %v", got)
	}
}
