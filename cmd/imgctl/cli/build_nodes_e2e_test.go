package cli

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/imgctl/imgctl/build/nodes"
	"github.com/imgctl/imgctl/internal/testing/buildtest"
	"github.com/imgctl/imgctl/lint"
)

// nodesDockerfile is small on purpose: no RUN, no compile, only COPY.
const nodesDockerfile = `ARG LINUX_BASE=gcr.io/distroless/static-debian12:nonroot
ARG WINDOWS_BASE=mcr.microsoft.com/windows/nanoserver:ltsc2022
FROM ${LINUX_BASE} AS final-linux
COPY hello.txt /hello.txt
FROM ${WINDOWS_BASE} AS final-windows
COPY hello.txt C:/hello.txt
FROM final-${TARGETOS}
`

// TestBuildNodesE2E spreads one build over two buildkitd daemons: one for
// linux/amd64 and linux/arm64, the other standing in for the Windows node
// (it is a Linux daemon, so a RUN in the Windows stage stays refused).
func TestBuildNodesE2E(t *testing.T) {
	start := time.Now()
	host, ctxDir, args := nodesFixture(t, "hello from every node\n")

	t.Run("unmapped platforms", func(t *testing.T) {
		_, stderr, code := run(t, append([]string{"build", "--node", "linux/amd64=unix:///nonexistent/a.sock",
			"-t", host + "/multi:unmapped"}, append(args, ctxDir)...)...)
		if code != ExitError || !strings.Contains(stderr, nodes.ErrUnmappedPlatforms.Error()) ||
			!strings.Contains(stderr, "linux/arm64, windows/amd64:10.0.20348") || strings.Contains(stderr, "nonexistent") {
			t.Errorf("exit %d, stderr:\n%s", code, stderr)
		}
	})

	linux, windows := startDaemons(t, host)
	nodes := []string{"--node", "linux/amd64=" + linux.Addr, "--node", "linux/arm64=" + linux.Addr, "--node", "windows=" + windows.Addr}
	tag := host + "/multi:1"
	out, stderr, code := run(t, append(append([]string{"build", "--progress", "plain", "-t", tag}, nodes...), append(args, ctxDir)...)...)
	if code != 0 {
		t.Fatalf("build exit %d\nstdout:\n%s\nstderr:\n%s", code, out, tail(stderr, 60))
	}

	t.Run("one index", func(t *testing.T) {
		plats := indexPlatforms(t, tag)
		want := []string{"linux/amd64", "linux/arm64", "windows/amd64:" + buildtest.OSVersionLTSC2022}
		if !slices.Equal(plats, want) {
			t.Errorf("index platforms = %v, want %v", plats, want)
		}
	})
	t.Run("one progress view", func(t *testing.T) {
		for _, label := range []string{"[linux/amd64,linux/arm64] ", "[windows] "} {
			if !strings.Contains(stderr, label) {
				t.Errorf("progress lacks %q vertices:\n%s", label, tail(stderr, 40))
			}
		}
	})
	t.Run("each node did its part", func(t *testing.T) {
		if got := solvedPlatforms(t, linux); !slices.Equal(got, []string{"linux/amd64,linux/arm64"}) {
			t.Errorf("linux node solved %v", got)
		}
		// The Windows solve asks for the base's os.version (build.Plan
		// solvePlatforms); the base resolutions are internal builds that
		// the history does not record.
		if got := solvedPlatforms(t, windows); !slices.Equal(got, []string{"windows(" + buildtest.OSVersionLTSC2022 + ")/amd64"}) {
			t.Errorf("windows node solved %v", got)
		}
	})
	t.Run("RUN refused on the Linux stand-in", func(t *testing.T) {
		df := filepath.Join(t.TempDir(), "Dockerfile")
		writeFile(t, df, strings.Replace(nodesDockerfile, "COPY hello.txt C:/hello.txt\n", "COPY hello.txt C:/hello.txt\nRUN msiexec /i app.msi\n", 1))
		out, stderr, code := run(t, append(append([]string{"build", "-t", host + "/multi:run", "-f", df}, nodes...), append(args, ctxDir)...)...)
		if code != ExitFailed || !strings.Contains(out, "["+lint.RuleRunInWindowsStage+"]") {
			t.Errorf("exit %d, want 1 with %s\nstdout:\n%s\nstderr:\n%s", code, lint.RuleRunInWindowsStage, out, stderr)
		}
		if got := solvedPlatforms(t, windows); len(got) != 1 {
			t.Errorf("the windows node solved again: %v", got)
		}
	})
	t.Run("fallback builder for unmapped platforms", func(t *testing.T) {
		tag := host + "/multi:fallback"
		out, stderr, code := run(t, append([]string{"build", "--builder", linux.Addr, "--node", "windows=" + windows.Addr,
			"-t", tag}, append(args, ctxDir)...)...)
		if code != 0 {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, tail(stderr, 40))
		}
		if got := solvedPlatforms(t, linux); len(got) != 2 || got[0] != got[1] {
			t.Errorf("linux (fallback) node solved %v", got)
		}
		if got := solvedPlatforms(t, windows); len(got) != 2 {
			t.Errorf("windows node solved %v", got)
		}
		if plats := indexPlatforms(t, tag); len(plats) != 3 {
			t.Errorf("index platforms = %v", plats)
		}
	})
	t.Logf("nodes e2e total %s", time.Since(start).Round(time.Millisecond))
}
