package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/internal/testing/buildtest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// sbomCase is imgctl build --sbom of a Windows variant on the plain path
// against --sbom=base=reference (issue 38, "SBOM"), counting the base
// layer bytes each reads.
const sbomCase = "build-windows-sbom"

// sbomPayload is the random payload of the base's layer, so that the
// layer does not compress and the bytes the plain path moves are plain.
const sbomPayload = 32 << 20

// sbomDockerfile is a Windows stage without RUN, which a graft keeps; its
// WORKDIR is a directory of the base (the e2e test's, build/sbom_e2e_test.go).
const sbomDockerfile = `ARG WINDOWS_BASE
FROM ${WINDOWS_BASE}
COPY app.exe /app/app.exe
COPY app.exe /Windows/System32/app-copy.exe
WORKDIR /Windows/System32
ENTRYPOINT ["C:\\app\\app.exe"]
`

// sbomSelected reports whether -cases names the case: it needs buildkitd
// and runs only when asked for.
func sbomSelected(cases string) bool {
	return slices.Contains(strings.Split(cases, ","), sbomCase)
}

// sbomRow is one measured build.
type sbomRow struct {
	name, flags string
	tool        *imgctlBuild
	run         coldRun
	err         error
}

// runSBOM measures the case: each row one build on a fresh buildkitd
// (cold builder cache), against the CNCF distribution registry behind the
// counting proxy. BuildKit runs the scanner image
// internal/testing/buildtest/scanner, pushed to the same registry.
func runSBOM(ctx context.Context, o options, root, binDir, work string, log io.Writer) (string, []goal, error) {
	rows := []*sbomRow{
		{name: "plain path", flags: "--sbom=generator=SCANNER"},
		{name: "base=reference, cold skeleton cache", flags: "--sbom=generator=SCANNER,base=reference"},
		{name: "base=reference, skeletons cached", flags: "--sbom=generator=SCANNER,base=reference"},
	}
	var tools []tool
	for i, r := range rows {
		h, err := newCmdTool(filepath.Join(work, fmt.Sprintf("sbom-%d", i)))
		if err != nil {
			return "", nil, err
		}
		r.tool = &imgctlBuild{imgctl: &imgctl{cmdTool: h, root: root}, keepCache: i == 2}
		if err := r.tool.Install(ctx, binDir); err != nil {
			return "", nil, err
		}
		tools = append(tools, r.tool)
	}
	d, err := startPreparedDistEnv(ctx, false, tools)
	if err != nil {
		return "", nil, err
	}
	defer d.Close()
	fmt.Fprintf(log, "%s: pushing the scanner and a %d MiB Windows base\n", sbomCase, sbomPayload>>20)
	scanner, err := buildtest.ScannerImage()
	if err != nil {
		return "", nil, err
	}
	sref, sd, err := d.dist.PushTag("tools/scanner:1", scanner)
	if err != nil {
		return "", nil, err
	}
	generator := sref.Context().Digest(sd.String()).String()
	pad := make([]byte, sbomPayload)
	if _, err := rand.Read(pad); err != nil {
		return "", nil, err
	}
	img, err := regtest.WindowsBaseImage(regtest.OSVersionLTSC2025, regtest.WithSeed(string(pad)))
	if err != nil {
		return "", nil, err
	}
	idx, err := regtest.Index(regtest.Entry{Image: img})
	if err != nil {
		return "", nil, err
	}
	m, err := img.Manifest()
	if err != nil {
		return "", nil, err
	}
	baseRef, _, err := d.dist.PushTag("bases/nanoserver:ltsc2025", idx)
	if err != nil {
		return "", nil, err
	}
	ctxDir := filepath.Join(work, "sbom-context")
	if err := os.MkdirAll(ctxDir, 0o755); err != nil {
		return "", nil, err
	}
	if err := os.WriteFile(filepath.Join(ctxDir, "Dockerfile"), []byte(sbomDockerfile), 0o644); err != nil {
		return "", nil, err
	}
	if err := os.WriteFile(filepath.Join(ctxDir, "app.exe"), []byte("MZ sbom bench\n"), 0o644); err != nil {
		return "", nil, err
	}
	host := d.reg.Host()
	load := [2]string{loadAvg()}
	for i, r := range rows {
		r.tool.extra = append([]string{strings.ReplaceAll(r.flags, "SCANNER", generator)}, buildPlainArgs...)
		if r.tool.keepCache {
			// Skeletons from one untimed build into another repository.
			target := fmt.Sprintf("%s/bench/%s/warmup:v1", host, sbomCase)
			if _, _, err := coldBuild(ctx, d, r.tool, baseRef.String(), m.Layers, ctxDir, target); err != nil {
				return "", nil, fmt.Errorf("%s: warm-up of %s: %w", sbomCase, r.name, err)
			}
		}
		target := fmt.Sprintf("%s/bench/%s/row%d:v1", host, sbomCase, i+1)
		r.run, _, r.err = coldBuild(ctx, d, r.tool, baseRef.String(), m.Layers, ctxDir, target)
		fmt.Fprintf(log, "  %s %-40s %d requests, base down %d, read %d, up %d, %v, err %v\n", sbomCase, r.name,
			r.run.Stats.Total(), r.run.baseDown, r.run.baseRead, r.run.baseUp, r.run.Wall.Round(time.Millisecond), r.err)
		if ctx.Err() != nil {
			return "", nil, ctx.Err()
		}
	}
	load[1] = loadAvg()
	rep := &sbomReport{rows: rows, baseLayers: m.Layers, load: load}
	return rep.section(ctx), rep.goals(), nil
}

// sbomReport renders the case.
type sbomReport struct {
	rows       []*sbomRow
	baseLayers []v1.Descriptor
	load       [2]string
	now        time.Time
}

func (rep *sbomReport) section(ctx context.Context) string {
	now := rep.now
	if now.IsZero() {
		now = time.Now()
	}
	var size int64
	for _, l := range rep.baseLayers {
		size += l.Size
	}
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("<!-- build-case:%s:begin -->\n", sbomCase)
	w("## %s: imgctl build --sbom of a Windows variant, plain path against base=reference\n\n", sbomCase)
	w("Measured on %s: %s %s/%s, nproc %s; one build per row, each on a fresh buildkitd; load average %s before, %s after. "+
		"Opt-in (`-cases %s`): it needs buildkitd and runc.\n\n",
		now.UTC().Format("2006-01-02 15:04 MST"), runtime.Version(), runtime.GOOS, runtime.GOARCH, nproc(ctx), rep.load[0], rep.load[1], sbomCase)
	w("### Method\n\n")
	w("- **Registry**: the CNCF distribution registry (bin/registry, htpasswd) behind the bench's counting proxy.\n")
	w("- **Base**: `HOST/bases/nanoserver:ltsc2025`, an index of one windows/amd64 image in regtest's Windows layout "+
		"(os.version %s) whose layer holds %d MiB of random bytes: %d layer(s), %s bytes.\n", regtest.OSVersionLTSC2025, sbomPayload>>20, len(rep.baseLayers), thousands(size))
	w("- **Scanner**: internal/testing/buildtest/scanner (lists every regular file with its sha256 in SPDX), pushed to " +
		"`HOST/tools/scanner` and given as `--sbom=generator=SCANNER`; BuildKit runs it on Linux for the Windows variant.\n")
	w("- **Build**: `imgctl build --windows ltsc2025 --windows-base ltsc2025=BASE --platform windows/amd64 --provenance=false " +
		"--no-verify --progress quiet` and the row's `--sbom`, of this Dockerfile:\n\n")
	w("```dockerfile\n%s```\n\n", sbomDockerfile)
	w("- **Base bytes**: the bytes of GETs of the base's layer blobs by BuildKit (its User-Agent) and by imgctl (for the " +
		"graft's skeletons), and base layer bytes uploaded; mounts move none. The third row's skeletons come from one untimed " +
		"build of the same row into another repository.\n\n")
	w("### Results\n\n")
	t := newTable("row", "--sbom", "requests:", "base bytes by BuildKit:", "base bytes by imgctl:", "base bytes uploaded:", "other bytes uploaded:", "wall:")
	for _, r := range rep.rows {
		if r.err != nil {
			t.row(r.name, "`"+r.flags+"`", "failed: "+mdEscape(r.err.Error()))
			continue
		}
		t.row(r.name, "`"+r.flags+"`", bold(r.run.Stats.Total()), thousands(r.run.baseDown), thousands(r.run.baseRead),
			thousands(r.run.baseUp), thousands(r.run.otherUp), fmtWall(r.run.Wall))
	}
	w("%s\n### Goals\n\n", t)
	w("%s", goalList(rep.goals()))
	w("\n<!-- build-case:%s:end -->\n", sbomCase)
	return b.String()
}

func (rep *sbomReport) goals() []goal {
	if len(rep.rows) != 3 || rep.rows[2].err != nil || rep.rows[1].err != nil {
		var errs []string
		for _, r := range rep.rows {
			if r.err != nil {
				errs = append(errs, r.name+": "+r.err.Error())
			}
		}
		return []goal{{title: sbomCase + " measured", detail: strings.Join(errs, "; ")}}
	}
	cold, warm := rep.rows[1].run, rep.rows[2].run
	total := func(r coldRun) int64 { return r.baseDown + r.baseRead + r.baseUp }
	g := goal{ok: total(warm) == 0 && cold.baseDown == 0 && cold.baseUp == 0,
		title: "build-windows-sbom: --sbom=base=reference moves 0 base bytes",
		detail: fmt.Sprintf("skeletons cached: %s bytes; cold skeleton cache: BuildKit %s, imgctl %s (each base layer read once for its skeleton), uploaded %s",
			thousands(total(warm)), thousands(cold.baseDown), thousands(cold.baseRead), thousands(cold.baseUp))}
	if p := rep.rows[0]; p.err == nil {
		g.detail += fmt.Sprintf("; the plain path: BuildKit %s bytes", thousands(p.run.baseDown))
	}
	g.detail += "."
	return []goal{g}
}
