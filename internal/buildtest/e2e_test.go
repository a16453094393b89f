package buildtest

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"io"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/moby/buildkit/client"
	"github.com/tonistiigi/fsutil"
)

// TestBuildHello builds examples/hello for linux/amd64, linux/arm64 and
// windows/amd64 in one solve on a real buildkitd and checks the pushed index.
func TestBuildHello(t *testing.T) {
	start := time.Now()
	srv := httptest.NewServer(registry.New(registry.Logger(quietLogger())))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	bases, err := SeedBases(host)
	if err != nil {
		t.Fatalf("seeding bases: %v", err)
	}
	t.Logf("seeded bases in %s", time.Since(start).Round(time.Millisecond))

	d := New(t, Options{InsecureRegistries: []string{host}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c, err := d.Client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	target := host + "/hello:test"
	solveStart := time.Now()
	if err := solveHello(ctx, t, c, bases, target); err != nil {
		t.Fatal(err)
	}
	t.Logf("solve took %s, total %s", time.Since(solveStart).Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	checkHelloIndex(t, target)
}

func solveHello(ctx context.Context, t *testing.T, c *client.Client, bases Bases, target string) error {
	root, err := ModuleRoot()
	if err != nil {
		return err
	}
	helloDir := filepath.Join(root, "examples", "hello")
	fs, err := fsutil.NewFS(helloDir)
	if err != nil {
		return err
	}
	attrs := map[string]string{"platform": "linux/amd64,linux/arm64,windows/amd64", "build-arg:VERSION": "e2e"}
	for k, v := range bases.BuildArgs() {
		attrs["build-arg:"+k] = v
	}
	var (
		progress bytes.Buffer
		wg       sync.WaitGroup
	)
	ch := make(chan *client.SolveStatus)
	wg.Go(func() { drainStatus(ch, &progress) })
	_, err = c.Solve(ctx, nil, client.SolveOpt{
		Frontend:      "dockerfile.v0",
		FrontendAttrs: attrs,
		LocalMounts:   map[string]fsutil.FS{"context": fs, "dockerfile": fs},
		Exports: []client.ExportEntry{{
			Type:  client.ExporterImage,
			Attrs: map[string]string{"name": target, "push": "true"},
		}},
	}, ch)
	wg.Wait()
	if err != nil {
		t.Logf("build output:\n%s", progress.String())
	}
	return err
}

// drainStatus writes vertex names, errors and logs from ch to out.
func drainStatus(ch chan *client.SolveStatus, out *bytes.Buffer) {
	seen := map[string]bool{}
	for s := range ch {
		for _, v := range s.Vertexes {
			if v.Completed != nil && !seen[v.Digest.String()] {
				seen[v.Digest.String()] = true
				out.WriteString("DONE " + v.Name + "\n")
			}
			if v.Error != "" {
				out.WriteString("ERROR " + v.Name + ": " + v.Error + "\n")
			}
		}
		for _, l := range s.Logs {
			out.Write(l.Data)
		}
	}
}

func checkHelloIndex(t *testing.T, target string) {
	ref, err := name.ParseReference(target, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := remote.Index(ref)
	if err != nil {
		t.Fatalf("reading pushed index: %v", err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var plats []string
	for _, desc := range im.Manifests {
		plats = append(plats, desc.Platform.String())
		img, err := idx.Image(desc.Digest)
		if err != nil {
			t.Fatal(err)
		}
		checkHelloImage(t, desc.Platform, img)
	}
	slices.Sort(plats)
	want := []string{"linux/amd64", "linux/arm64", "windows/amd64:" + OSVersionLTSC2022}
	if !slices.Equal(plats, want) {
		t.Errorf("index platforms = %v, want %v", plats, want)
	}
}

// checkHelloImage checks the config and the app layer (the last one) of one variant.
func checkHelloImage(t *testing.T, p *v1.Platform, img v1.Image) {
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	entries := map[string][]byte{}
	forEachEntry(t, layers[len(layers)-1], func(h *tar.Header, r io.Reader) {
		dt, _ := io.ReadAll(io.LimitReader(r, 64))
		entries[h.Name] = dt
	})
	switch p.OS {
	case "windows":
		if cf.OSVersion != OSVersionLTSC2022 || cf.Config.User != "ContainerUser" ||
			!slices.Equal(cf.Config.Entrypoint, []string{`C:\app\hello.exe`}) {
			t.Errorf("windows config: os.version %q user %q entrypoint %q", cf.OSVersion, cf.Config.User, cf.Config.Entrypoint)
		}
		if !hasPrefix(entries, "Files") || !hasPrefix(entries, "Hives") {
			t.Errorf("windows app layer lacks Files/ and Hives/: %v", keys(entries))
		}
		if exe := entries["Files/app/hello.exe"]; !bytes.HasPrefix(exe, []byte("MZ")) {
			t.Errorf("Files/app/hello.exe is not a PE file: %q", exe)
		}
	case "linux":
		if cf.Config.User != "nonroot" || !slices.Equal(cf.Config.Entrypoint, []string{"/hello"}) {
			t.Errorf("%s config: user %q entrypoint %q", p, cf.Config.User, cf.Config.Entrypoint)
		}
		checkELF(t, p.Architecture, entries["hello"])
	}
}

func checkELF(t *testing.T, arch string, head []byte) {
	want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[arch]
	if len(head) < 20 || !bytes.HasPrefix(head, []byte(elf.ELFMAG)) {
		t.Errorf("linux/%s: /hello is not an ELF file: %q", arch, head)
		return
	}
	if got := elf.Machine(uint16(head[18]) | uint16(head[19])<<8); got != want {
		t.Errorf("linux/%s: /hello is built for %v", arch, got)
	}
}

func hasPrefix(m map[string][]byte, prefix string) bool {
	for k := range m {
		if k == prefix || strings.HasPrefix(k, prefix+"/") {
			return true
		}
	}
	return false
}

func keys(m map[string][]byte) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
