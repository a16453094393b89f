package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	controlapi "github.com/moby/buildkit/api/services/control"

	"github.com/imgctl/imgctl/build/nodes"
	"github.com/imgctl/imgctl/internal/testing/buildtest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// startDaemons starts the two daemons concurrently, each with its own root.
func startDaemons(t *testing.T, registryHost string) (linux, windows *buildtest.Daemon) {
	t.Helper()
	buildtest.SkipShort(t, buildtest.NeedsBuildkitd)
	ds := make([]*buildtest.Daemon, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range ds {
		wg.Go(func() {
			ds[i], errs[i] = buildtest.StartBuildkitd(context.Background(), buildtest.Options{InsecureRegistries: []string{registryHost}})
		})
	}
	wg.Wait()
	for _, d := range ds {
		if d == nil {
			continue
		}
		t.Cleanup(func() {
			if t.Failed() {
				t.Log(d.LogTail(40))
			}
			if err := d.Close(); err != nil {
				t.Errorf("stopping buildkitd: %v", err)
			}
		})
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("starting buildkitd: %v", err)
	}
	return ds[0], ds[1]
}

// solvedPlatforms lists the platform attribute of every build the daemon
// recorded in its build history.
func solvedPlatforms(t *testing.T, d *buildtest.Daemon) []string {
	t.Helper()
	return solvedAttrs(t, d, "platform")
}

// solvedAttrs lists the frontend attribute key (platform,
// build-arg:NAME) of every build the daemon recorded in its build
// history, sorted.
func solvedAttrs(t *testing.T, d *buildtest.Daemon, key string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := d.Client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	stream, err := c.ControlClient().ListenBuildHistory(ctx, &controlapi.BuildHistoryRequest{EarlyExit: true})
	if err != nil {
		t.Fatalf("build history of %s: %v", d.Addr, err)
	}
	var out []string
	for {
		ev, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("build history of %s: %v", d.Addr, err)
		}
		if ev.Record != nil {
			out = append(out, ev.Record.FrontendAttrs[key])
		}
	}
	slices.Sort(out)
	return out
}

// nodesFixture starts a registry with the bases of nodesDockerfile and
// writes a context for it; args are the build flags that use those bases
// (without -t and the context). $BUILDKIT_HOST is cleared for the test.
func nodesFixture(t *testing.T, hello string) (host, ctxDir string, args []string) {
	t.Helper()
	host = regtest.New(t).Host()
	linuxBase, winBase := host+"/base:linux", host+"/nanoserver:ltsc2022"
	seedNodeBases(t, linuxBase, winBase)
	ctxDir = t.TempDir()
	writeFile(t, filepath.Join(ctxDir, "hello.txt"), hello)
	writeFile(t, filepath.Join(ctxDir, "Dockerfile"), nodesDockerfile)
	t.Setenv(nodes.EnvBuildkitHost, "")
	return host, ctxDir, []string{"--windows", "ltsc2022", "--windows-base", "ltsc2022=" + winBase, "--build-arg", "LINUX_BASE=" + linuxBase}
}

func seedNodeBases(t *testing.T, linuxRef, winRef string) {
	t.Helper()
	idx, _, err := regtest.LinuxIndex()
	if err != nil {
		t.Fatal(err)
	}
	win, err := regtest.WindowsBaseImage(buildtest.OSVersionLTSC2022)
	if err != nil {
		t.Fatal(err)
	}
	regtest.MustPush(t, parseRef(t, linuxRef), idx)
	regtest.MustPush(t, parseRef(t, winRef), win)
}

func indexPlatforms(t *testing.T, ref string) []string {
	t.Helper()
	ii, err := remote.Index(parseRef(t, ref))
	if err != nil {
		t.Fatal(err)
	}
	im, err := ii.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var plats []string
	for _, d := range im.Manifests {
		if d.Platform == nil || d.Platform.OS == "unknown" {
			continue
		}
		plats = append(plats, d.Platform.String())
	}
	return plats
}

func parseRef(t *testing.T, s string) name.Reference {
	t.Helper()
	ref, err := name.ParseReference(s, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
