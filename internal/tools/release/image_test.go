package release

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/cmd/imgctl/cli"
	"github.com/imgctl/imgctl/internal/testing/buildtest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/snapshot"
)

// TestImageFromPrebuiltBinaries runs the image half of the release (lint,
// build, verify, sign, notes) as the dry run does, on a real buildkitd with
// the synthetic bases, from stand-in binaries: compiling four platforms
// is left to the dry run in CI. It checks that each variant carries its
// own binary where release/Dockerfile puts it (Windows in the Files/
// layout), the stamp's labels, and the notes' platform table.
func TestImageFromPrebuiltBinaries(t *testing.T) {
	buildtest.SkipShort(t, buildtest.NeedsBuildkitd)
	l, err := buildtest.StartLocal(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Error(err)
		}
	})
	dist := t.TempDir()
	bins := filepath.Join(dist, "bin")
	for _, tg := range Targets() {
		if err := os.MkdirAll(filepath.Join(bins, tg.Dir()), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bins, tg.Dir(), tg.Binary()), []byte("imgctl for "+tg.String()), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("COSIGN_PASSWORD", "test")
	prefix := filepath.Join(t.TempDir(), "cosign")
	var log bytes.Buffer
	if code := cli.Execute(t.Context(), []string{"keygen", prefix}, strings.NewReader(""), &log, &log); code != cli.ExitOK {
		t.Fatalf("keygen: exit %d\n%s", code, log.String())
	}
	c := Config{Root: filepath.Join("..", "..", ".."), Dist: dist, Log: &log,
		Stamp:      Stamp{Version: "v0.1.0", Revision: "0123456789abcdef0123456789abcdef01234567", Time: "2026-12-01T20:00:00Z"},
		Repository: l.Registry.Host() + "/imgctl/imgctl", Builder: l.Builder.Addr, LinuxBase: l.Bases.Distroless,
		WindowsBases: map[string]string{"ltsc2022": l.Bases.Nanoserver2022, "ltsc2025": l.Bases.Nanoserver2025},
		Key:          prefix + ".key", PublicKey: prefix + ".pub", Imgctl: cli.Execute}
	res := Result{Archives: []string{ArchiveName(c.Stamp.Version, Targets()[0])}}
	if res.Image, err = c.image(t.Context(), bins, []string{"linux/amd64", "linux/arm64"}); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if err := c.notes(t.Context(), res, []string{"linux/amd64", "linux/arm64"}); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}

	ref, err := name.ParseReference(res.Image, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := remote.Index(ref, remote.WithContext(t.Context()))
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{ // platform and os.version: the file, and its content
		"linux/amd64": "usr/local/bin/imgctl=imgctl for linux/amd64",
		"linux/arm64": "usr/local/bin/imgctl=imgctl for linux/arm64",
		"windows/amd64:" + buildtest.OSVersionLTSC2022: "Files/imgctl/imgctl.exe=imgctl for windows/amd64",
		"windows/amd64:" + buildtest.OSVersionLTSC2025: "Files/imgctl/imgctl.exe=imgctl for windows/amd64",
	}
	for _, d := range im.Manifests {
		if d.Annotations[snapshot.AnnotationReferenceType] == snapshot.AttestationManifest {
			continue
		}
		p := d.Platform.OS + "/" + d.Platform.Architecture
		if d.Platform.OSVersion != "" {
			p += ":" + d.Platform.OSVersion
		}
		file, content, ok := strings.Cut(want[p], "=")
		if !ok {
			t.Errorf("unexpected variant %s", p)
			continue
		}
		delete(want, p)
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		if got := lastLayerFile(t, img, file); got != content {
			t.Errorf("%s: %s holds %q, want %q", p, file, got, content)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if l := cf.Config.Labels; l["org.opencontainers.image.version"] != c.Stamp.Version || l["org.opencontainers.image.revision"] != c.Stamp.Revision {
			t.Errorf("%s: labels %v lack the stamp", p, l)
		}
	}
	for p := range want {
		t.Errorf("the index lacks %s", p)
	}

	notes, err := os.ReadFile(filepath.Join(dist, NotesName))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"| " + buildtest.OSVersionLTSC2022 + " | `sha256:", "| ltsc2022 |\n", "| ltsc2025 |\n", "| linux/arm64 |", "--key cosign.pub"} {
		if !strings.Contains(string(notes), w) {
			t.Errorf("notes lack %q:\n%s", w, notes)
		}
	}
}

// lastLayerFile returns the content of file in img's last layer (the COPY
// of the binary).
func lastLayerFile(t *testing.T, img v1.Image, file string) string {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	files, err := regtest.LayerFiles(layers[len(layers)-1])
	if err != nil {
		t.Fatal(err)
	}
	content, ok := files[file]
	if !ok {
		t.Fatalf("the last layer has no %s: %v", file, slices.Sorted(maps.Keys(files)))
	}
	return content
}
