package regtest

import (
	"slices"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

func TestFixturesAreDeterministic(t *testing.T) {
	for name, f := range map[string]func() (any, error){
		"linux":       func() (any, error) { return LinuxImage("arm64") },
		"windows":     func() (any, error) { return WindowsImage(OSVersionLTSC2022) },
		"base":        func() (any, error) { return WindowsBaseImage(OSVersionLTSC2022) },
		"hostprocess": func() (any, error) { return HostProcessImage() },
		"foreign":     func() (any, error) { return ForeignLayerImage(OSVersionLTSC2022) },
		"index":       func() (any, error) { return MultiOSIndex() },
	} {
		t.Run(name, func(t *testing.T) {
			a := Must(f())(t).(interface{ Digest() (v1.Hash, error) })
			b := Must(f())(t).(interface{ Digest() (v1.Hash, error) })
			if digestOf(t, a) != digestOf(t, b) {
				t.Fatal("two calls gave different digests")
			}
		})
	}
}

func TestFixturesDiffer(t *testing.T) {
	seen := map[v1.Hash]string{}
	for name, img := range map[string]v1.Image{
		"amd64":     Must(LinuxImage("amd64"))(t),
		"arm64":     Must(LinuxImage("arm64"))(t),
		"seed":      Must(LinuxImage("amd64", WithSeed("x")))(t),
		"2022":      Must(WindowsImage(OSVersionLTSC2022))(t),
		"2025":      Must(WindowsImage(OSVersionLTSC2025))(t),
		"2025-seed": Must(WindowsImage(OSVersionLTSC2025, WithSeed("x")))(t),
	} {
		d := digestOf(t, img)
		if other, ok := seen[d]; ok {
			t.Errorf("%s and %s share digest %s", name, other, d)
		}
		seen[d] = name
	}
}

func TestWithBase(t *testing.T) {
	base := Must(WindowsBaseImage(OSVersionLTSC2025))(t)
	img := Must(WindowsImage("ignored", WithBase(base)))(t)
	if digestOf(t, img) != digestOf(t, Must(WindowsImage(OSVersionLTSC2025))(t)) {
		t.Error("WindowsImage(v) differs from WindowsImage(_, WithBase(WindowsBaseImage(v)))")
	}
	bm, err := base.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Layers) != len(bm.Layers)+1 {
		t.Fatalf("%d layers on a base of %d", len(m.Layers), len(bm.Layers))
	}
	for i, l := range bm.Layers {
		if m.Layers[i].Digest != l.Digest || m.Layers[i].MediaType != l.MediaType {
			t.Errorf("layer %d: %+v, want base layer %+v", i, m.Layers[i], l)
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OSVersion != OSVersionLTSC2025 {
		t.Errorf("os.version %q, want the base's", cf.OSVersion)
	}

	// A Docker base keeps Docker media types.
	old := Must(ForeignLayerImage(OSVersionLTSC2022))(t)
	onOld := Must(WindowsImage("", WithBase(old)))(t)
	if mt, _ := onOld.MediaType(); mt != types.DockerManifestSchema2 {
		t.Errorf("media type on a Docker base: %s", mt)
	}
}

func TestImageOptions(t *testing.T) {
	img := Must(LinuxImage("amd64",
		WithUser("1000"),
		WithEntrypoint([]string{"/bin/app"}),
		WithCmd([]string{"serve"}),
		WithLabel("org.opencontainers.image.source", "https://example.com"),
		WithConfigOSVersion("1.2.3.4"),
		WithAnnotations(map[string]string{"a": "b"}),
		WithDockerMediaTypes(),
	))(t)
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if c.User != "1000" || !slices.Equal(c.Entrypoint, []string{"/bin/app"}) || !slices.Equal(c.Cmd, []string{"serve"}) ||
		c.Labels["org.opencontainers.image.source"] != "https://example.com" || cf.OSVersion != "1.2.3.4" {
		t.Fatalf("config %+v", cf)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.Annotations["a"] != "b" || m.MediaType != types.DockerManifestSchema2 ||
		m.Config.MediaType != types.DockerConfigJSON || m.Layers[0].MediaType != types.DockerLayer {
		t.Fatalf("manifest %+v", m)
	}
	if !cf.Created.Equal(FixtureTime) {
		t.Fatalf("created %v", cf.Created)
	}

	win := Must(WindowsImage(OSVersionLTSC2025, WithConfigOSVersion(OSVersionLTSC2022)))(t)
	if cf := Must(win.ConfigFile())(t); cf.OSVersion != OSVersionLTSC2022 {
		t.Fatalf("os.version %q", cf.OSVersion)
	}
}
