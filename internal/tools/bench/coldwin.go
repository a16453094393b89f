package main

import (
	"archive/tar"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/internal/testing/buildtest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// coldCase is the cold Windows build on a large base (issue 17, point 5).
const coldCase = "build-windows-cold"

// coldPayload is the random payload of the cold case's base layer: random
// bytes do not compress, so the layer is at least this large (157 MiB,
// about 165 MB, as the nanoserver-shaped base).
const coldPayload = 157 << 20

// coldDockerfile is the Windows stage: one plain COPY onto the base.
const coldDockerfile = `ARG WINDOWS_BASE
FROM ${WINDOWS_BASE}
COPY app.exe /app/app.exe
ENTRYPOINT ["C:\\app\\app.exe"]
`

// hostRE is a registry's 127.0.0.1:PORT, which the report writes as HOST.
var hostRE = regexp.MustCompile(`127\.0\.0\.1:[0-9]+`)

// coldRun is one measured cold build.
type coldRun struct {
	sample
	// Blob bytes: base layers fetched by the builder and by imgctl (to
	// make skeletons), base layers uploaded, anything else uploaded.
	baseDown, baseRead, baseUp, otherUp int64
}

// coldResult is one tool's cold builds and what its first result holds.
type coldResult struct {
	tool tool
	runs []coldRun
	// ref is the Windows image the first successful run pushed.
	ref string
	// baseKept: that image lists the base's layers, unchanged, first.
	baseKept bool
	// entries are that image's own layers' tar entries (coldEntry).
	entries []string
	readErr error
}

// coldReport is what the cold case measured.
type coldReport struct {
	runs        int
	base        []v1.Descriptor
	results     []*coldResult
	verifyPlain sample
	verifyLayer sample
	verifyRead  string // verify --layers' own count, from its JSON
	verifyErr   error
}

// runColdWindows runs the cold Windows build: a nanoserver-shaped base of
// one ≥150 MB layer in the CNCF distribution registry (htpasswd auth), a
// Windows stage with one plain COPY, and for every run of every tool a
// fresh buildkitd that has never pulled anything. It returns the case's
// RESULTS.md section.
func runColdWindows(ctx context.Context, o options, root, binDir, work string, log io.Writer) (string, error) {
	tools, err := coldTools(root, work, o.baseline)
	if err != nil {
		return "", err
	}
	if tools = filter(tools, o.tools, tool.Name); len(tools) == 0 {
		return "", nil
	}
	for _, t := range tools {
		fmt.Fprintf(log, "installing %s\n", t.Name())
		if err := t.Install(ctx, binDir); err != nil {
			return "", err
		}
	}
	d, err := startPreparedDistEnv(ctx, false, tools)
	if err != nil {
		return "", err
	}
	defer d.Close()
	fmt.Fprintf(log, "%s: making and pushing a %d MiB Windows base\n", coldCase, coldPayload>>20)
	baseRef, base, err := pushColdBase(d)
	if err != nil {
		return "", err
	}
	ctxDir := filepath.Join(work, "cold-context")
	if err := writeColdContext(ctxDir); err != nil {
		return "", err
	}
	rep := &coldReport{runs: o.buildRuns, base: base}
	for _, t := range tools {
		rep.results = append(rep.results, &coldResult{tool: t})
	}
	host := d.reg.Host()
	// The row with skeletons cached gets them from one untimed build.
	for _, t := range tools {
		if h, ok := t.(interface{ coldCache() (string, bool) }); ok {
			if _, empty := h.coldCache(); !empty {
				target := fmt.Sprintf("%s/bench/%s/warmup-%s:merged", host, coldCase, slug(t.Name()))
				if _, _, err := coldBuild(ctx, d, t, baseRef.String(), base, ctxDir, target); err != nil {
					return "", fmt.Errorf("%s: warm-up build with %s: %w", coldCase, t.Name(), err)
				}
			}
		}
	}
	for r := range o.buildRuns {
		for i := range rep.results {
			cr := rep.results[(i+r)%len(rep.results)]
			run, ref, err := coldBuild(ctx, d, cr.tool, baseRef.String(), base, ctxDir,
				fmt.Sprintf("%s/bench/%s/%s-run%d:merged", host, coldCase, slug(cr.tool.Name()), r+1))
			cr.runs = append(cr.runs, run)
			status := fmt.Sprintf("base down %d, base up %d, %d requests, %v", run.baseDown, run.baseUp, run.Stats.Total(), run.Wall.Round(time.Millisecond))
			if err != nil {
				status = "FAILED: " + err.Error()
			} else if cr.ref == "" {
				cr.ref = ref
				cr.baseKept, cr.entries, cr.readErr = readColdImage(ctx, d.env, ref, base)
			}
			fmt.Fprintf(log, "  %s run %d %-14s %s\n", coldCase, r+1, cr.tool.Name(), status)
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
		}
	}
	if t, ok := tools[0].(*imgctlBuild); ok && t.baseline == "" && rep.results[0].ref != "" {
		rep.verify(ctx, d.env, t, rep.results[0].runTag(host))
	}
	return rep.section(ctx, baseRef.String()), nil
}

// coldTools are imgctl from this checkout, by default and on the plain
// path (--windows-plain), imgctl at the baseline revision when one is
// given, and buildctl. The imgctl rows run with --provenance=false, as
// buildctl attaches no attestation.
func coldTools(root, work, baseline string) ([]tool, error) {
	home := func(n string) (cmdTool, error) { return newCmdTool(filepath.Join(work, n)) }
	h, err := home("cold-imgctl")
	if err != nil {
		return nil, err
	}
	tools := []tool{&imgctlBuild{imgctl: &imgctl{cmdTool: h, root: root}, extra: buildPlainArgs}}
	if h, err = home("cold-imgctl-cached"); err != nil {
		return nil, err
	}
	tools = append(tools, &imgctlBuild{imgctl: &imgctl{cmdTool: h, root: root}, suffix: "+cached-skeletons",
		extra: buildPlainArgs, keepCache: true})
	if h, err = home("cold-imgctl-plain"); err != nil {
		return nil, err
	}
	tools = append(tools, &imgctlBuild{imgctl: &imgctl{cmdTool: h, root: root}, suffix: " --windows-plain",
		extra: append([]string{"--windows-plain"}, buildPlainArgs...)})
	if baseline != "" {
		if h, err = home("cold-imgctl-" + slug(baseline)); err != nil {
			return nil, err
		}
		tools = append(tools, &imgctlBuild{imgctl: &imgctl{cmdTool: h, root: root, baseline: baseline}, extra: buildPlainArgs})
	}
	if h, err = home("cold-buildctl"); err != nil {
		return nil, err
	}
	return append(tools, &buildctl{cmdTool: h, root: root}), nil
}

// pushColdBase pushes the base to bases/nanoserver:ltsc2025: the layout of
// regtest.WindowsBaseImage with coldPayload random bytes in its
// License.txt (through WithSeed), so that its one layer does not compress.
func pushColdBase(d *distEnv) (name.Reference, []v1.Descriptor, error) {
	pad := make([]byte, coldPayload)
	if _, err := rand.Read(pad); err != nil {
		return nil, nil, err
	}
	img, err := regtest.WindowsBaseImage(regtest.OSVersionLTSC2025, regtest.WithSeed(string(pad)))
	if err != nil {
		return nil, nil, err
	}
	m, err := img.Manifest()
	if err != nil {
		return nil, nil, err
	}
	if m.Layers[0].Size < 150e6 {
		return nil, nil, fmt.Errorf("cold base layer is %d bytes, want at least 150 MB", m.Layers[0].Size)
	}
	ref, _, err := d.dist.PushTag("bases/nanoserver:ltsc2025", img)
	return ref, m.Layers, err
}

// writeColdContext writes coldDockerfile and a small app.exe into dir.
func writeColdContext(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(coldDockerfile), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "app.exe"), []byte("MZ cold build bench\n"), 0o644)
}

// coldBuild runs one build by t on a fresh buildkitd and returns what it
// cost and the Windows image it pushed.
func coldBuild(ctx context.Context, d *distEnv, t tool, base string, baseLayers []v1.Descriptor, ctxDir, target string) (coldRun, string, error) {
	daemon, err := startColdDaemon(ctx, d)
	if err != nil {
		return coldRun{sample: sample{Err: err}}, "", err
	}
	defer daemon.Close()
	return coldBuildOn(ctx, d, daemon, t, base, baseLayers, ctxDir, target)
}

// startColdDaemon starts a fresh buildkitd that reaches d's registry over
// plain HTTP.
func startColdDaemon(ctx context.Context, d *distEnv) (*buildtest.Daemon, error) {
	daemon, err := buildtest.StartBuildkitd(ctx, buildtest.Options{InsecureRegistries: []string{d.reg.Host()}, StartTimeout: time.Minute})
	if err != nil {
		return nil, fmt.Errorf("starting buildkitd: %w", err)
	}
	return daemon, nil
}

// coldBuildOn is coldBuild on daemon, which the caller started and stops.
func coldBuildOn(ctx context.Context, d *distEnv, daemon *buildtest.Daemon, t tool, base string, baseLayers []v1.Descriptor, ctxDir, target string) (coldRun, string, error) {
	// Cold for imgctl too: no skeleton cached from an earlier run.
	if h, ok := t.(interface{ coldCache() (string, bool) }); ok {
		if dir, empty := h.coldCache(); empty {
			if err := os.RemoveAll(dir); err != nil {
				return coldRun{sample: sample{Err: err}}, "", err
			}
		}
	}
	var refs []string
	o := buildOp{Target: target, Addr: daemon.Addr, Context: ctxDir,
		Windows: []buildWindowsVariant{{Release: "ltsc2025", Base: base}},
		record:  func(_ string, r []string) { refs = r }}
	run := coldRun{sample: d.env.measure(func() error { return t.Run(ctx, o) })}
	fetched, uploaded := d.bytes.blobFlows()
	isBase := map[string]bool{}
	for _, l := range baseLayers {
		isBase[l.Digest.String()] = true
		run.baseDown += fetched["builder "+l.Digest.String()]
		run.baseRead += fetched["client "+l.Digest.String()]
	}
	for dg, n := range uploaded {
		if isBase[dg] {
			run.baseUp += n
		} else {
			run.otherUp += n
		}
	}
	if run.Err != nil {
		return run, "", fmt.Errorf("%w (buildkitd log: %s)", run.Err, daemon.LogTail(5))
	}
	if len(refs) == 1 {
		return run, refs[0], nil
	}
	ref, err := windowsChild(ctx, d.env, target)
	return run, ref, err
}

// windowsChild is the Windows image in the index at tag.
func windowsChild(ctx context.Context, e *env, tag string) (string, error) {
	ref, err := name.ParseReference(tag)
	if err != nil {
		return "", err
	}
	idx, err := remote.Index(ref, e.remote(ctx)...)
	if err != nil {
		return "", err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return "", err
	}
	for _, m := range im.Manifests {
		if m.Platform != nil && m.Platform.OS == "windows" {
			return ref.Context().Digest(m.Digest.String()).String(), nil
		}
	}
	return "", fmt.Errorf("%s: no Windows image in the index", tag)
}

// readColdImage reads the image at ref: whether it lists the base's
// layers first and unchanged, and the entries of its own layers.
func readColdImage(ctx context.Context, e *env, ref string, base []v1.Descriptor) (bool, []string, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return false, nil, err
	}
	img, err := remote.Image(r, e.remote(ctx)...)
	if err != nil {
		return false, nil, err
	}
	m, err := img.Manifest()
	if err != nil {
		return false, nil, err
	}
	kept := len(m.Layers) > len(base)
	for i := 0; kept && i < len(base); i++ {
		kept = m.Layers[i].Digest == base[i].Digest
	}
	if !kept {
		return false, nil, nil
	}
	layers, err := img.Layers()
	if err != nil {
		return false, nil, err
	}
	var entries []string
	for _, l := range layers[len(base):] {
		es, err := coldEntries(l)
		if err != nil {
			return true, nil, err
		}
		entries = append(entries, es...)
	}
	return true, entries, nil
}

// coldEntries lists a layer's tar entries as one line each: type, name,
// link, size, mode, owner, the PAX records other than timestamps, and the
// content's digest. Timestamps differ from build to build (the COPY's
// new directories get the time of the build), so they are left out.
func coldEntries(l v1.Layer) ([]string, error) {
	rc, err := l.Uncompressed()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	var out []string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		sum := sha256.New()
		if _, err := io.Copy(sum, tr); err != nil {
			return nil, err
		}
		var pax []string
		for k, v := range h.PAXRecords {
			if !strings.Contains(strings.ToLower(k), "time") {
				pax = append(pax, k+"="+v)
			}
		}
		sort.Strings(pax)
		out = append(out, fmt.Sprintf("%c %s link=%q size=%d mode=%o uid=%d gid=%d pax=%v sha256=%x",
			h.Typeflag, h.Name, h.Linkname, h.Size, h.Mode, h.Uid, h.Gid, pax, sum.Sum(nil)[:8]))
	}
}

// runTag is the tag imgctl's first successful run pushed.
func (cr *coldResult) runTag(host string) string {
	for i, r := range cr.runs {
		if r.Err == nil {
			return fmt.Sprintf("%s/bench/%s/%s-run%d:merged", host, coldCase, slug(cr.tool.Name()), i+1)
		}
	}
	return ""
}

// verify measures `imgctl verify` on tag, plain and with --layers, and
// keeps what --layers says it read.
func (rep *coldReport) verify(ctx context.Context, e *env, t *imgctlBuild, tag string) {
	rep.verifyPlain = e.measure(func() error {
		_, err := t.exec(ctx, "verify", "--windows", "ltsc2025", tag)
		return err
	})
	var out string
	rep.verifyLayer = e.measure(func() (err error) {
		out, err = t.exec(ctx, "verify", "--windows", "ltsc2025", "--layers", "-o", "json", tag)
		return err
	})
	var v struct {
		Layers *struct {
			Read  int   `json:"read"`
			Bytes int64 `json:"bytes"`
		} `json:"layers"`
	}
	switch err := json.Unmarshal([]byte(out), &v); {
	case rep.verifyLayer.Err != nil:
		rep.verifyErr = rep.verifyLayer.Err
	case rep.verifyPlain.Err != nil:
		rep.verifyErr = rep.verifyPlain.Err
	case err != nil || v.Layers == nil:
		rep.verifyErr = fmt.Errorf("verify --layers -o json: no layers count (%v)", err)
	default:
		rep.verifyRead = fmt.Sprintf("%d layer(s), %s bytes", v.Layers.Read, thousands(v.Layers.Bytes))
	}
}

// coldRowsNote says what the rows are and which of the three ways is missing.
const coldRowsNote = "The three ways the issue asks for: `imgctl` is imgctl's default, which solves the Windows stage " +
	"on a placeholder of the base's skeletons and grafts its layers onto the base (the builder fetches no base layer; " +
	"imgctl reads each base layer once to make its skeleton, counted apart, and each run starts with no skeleton " +
	"cached); `imgctl+cached-skeletons` is the same with the skeletons an untimed build made (a later build on " +
	"the same base); `imgctl --windows-plain` is BuildKit's plain path with imgctl's pre-mount of the base's layers into " +
	"the target repository; `buildctl` is raw BuildKit. A row `imgctl@REV`, when present, is imgctl built from that " +
	"earlier commit with the same command line: before the pre-mount, when REV predates it."

// section renders the case for RESULTS.md.
func (rep *coldReport) section(ctx context.Context, base string) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("<!-- build-case:%s:begin -->\n", coldCase)
	w("## %s: A cold Windows build on a 150 MB+ base: imgctl build against buildctl\n\n", coldCase)
	var vs []string
	for _, r := range rep.results {
		vs = append(vs, fmt.Sprintf("%s %s", r.tool.Name(), r.tool.Version()))
	}
	var size int64
	for _, l := range rep.base {
		size += l.Size
	}
	w("Measured on %s: %s %s/%s, nproc %s; %s; median of %d cold runs per tool.\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.Version(), runtime.GOOS, runtime.GOARCH, nproc(ctx), strings.Join(vs, ", "), rep.runs)
	w("The CNCF distribution registry (bin/registry, htpasswd auth, blobs linked per repository) behind the bench's "+
		"counting proxy. The base `HOST/bases/nanoserver:ltsc2025` is nanoserver-shaped (os.version %s, Files/ and "+
		"Hives/ layout) with one layer of %s bytes compressed (random content, which does not compress). The "+
		"Dockerfile is the issue's Windows stage: `FROM ${WINDOWS_BASE}`, `COPY app.exe /app/app.exe`, `ENTRYPOINT`. "+
		"Base and target are in the same registry. **Every run starts a fresh buildkitd** (new state directory, runc "+
		"worker) that has never pulled the base. imgctl: `imgctl build --builder ADDR --progress quiet --no-verify "+
		"--provenance=false --platform windows/amd64 --windows ltsc2025 --windows-base ltsc2025=%s -t TARGET CONTEXT`. "+
		"buildctl: `buildctl build --frontend dockerfile.v0 --opt platform=windows/amd64 --opt build-arg:WINDOWS_BASE=... "+
		"--output type=image,name=TARGET,push-by-digest=true,push=true`. Base bytes down are the bytes of the base's "+
		"layer blob that the registry served to the builder (by its User-Agent), those read by imgctl are counted apart; base bytes up are the bytes "+
		"uploaded in sessions closed with the base layer's digest. %s\n\n",
		regtest.OSVersionLTSC2025, thousands(size), hostRE.ReplaceAllString(base, "HOST"), coldRowsNote)
	t := newTable("tool", "base bytes down (builder):", "base bytes read by imgctl:", "base bytes up:", "other blob bytes up:", "mounts:",
		"GET:", "HEAD:", "PUT:", "POST:", "PATCH:", "requests:", "wall:", "wall min–max:")
	for _, r := range rep.results {
		ss := coldSamples(r)
		var down, read, up, other []int64
		for _, run := range r.runs {
			if run.Err == nil {
				down, read, up, other = append(down, run.baseDown), append(read, run.baseRead), append(up, run.baseUp), append(other, run.otherUp)
			}
		}
		s := summarize(ss)
		if s.Failed == s.Runs {
			t.row(r.tool.Name(), "failed: "+mdEscape(errText(s.FirstErr)))
			continue
		}
		lo, hi := wallRange(ss)
		t.row(r.tool.Name(), thousands(median(down)), thousands(median(read)), thousands(median(up)), thousands(median(other)), s.Mounts,
			s.Get, s.Head, s.Put, s.Post, s.Patch, bold(s.Total), fmtWall(s.Wall), fmtWall(lo)+"–"+fmtWall(hi))
	}
	w("%s\n", t)
	for _, r := range rep.results {
		if s := summarize(coldSamples(r)); s.Failed > 0 && s.Failed < s.Runs {
			w("- %s failed %d of %d runs; first error: %s\n", r.tool.Name(), s.Failed, s.Runs, mdEscape(errText(s.FirstErr)))
		}
	}
	w("- **Layer equivalence** (each tool's first result, read back after the runs: the image's own layers after the " +
		"base's, every tar entry's type, name, link, size, mode, owner, PAX records other than timestamps, and content " +
		"digest):\n")
	var ref *coldResult
	for _, r := range rep.results {
		switch {
		case r.ref == "":
			w("  - %s: no result to read\n", r.tool.Name())
		case r.readErr != nil:
			w("  - %s: reading %s: %s\n", r.tool.Name(), r.ref, mdEscape(r.readErr.Error()))
		case !r.baseKept:
			w("  - %s: **the image does not list the base's layer unchanged first**\n", r.tool.Name())
		case ref == nil:
			ref = r
			w("  - %s: the base's layer unchanged, then %d own entries: %s\n", r.tool.Name(), len(r.entries), coldEntryNames(r.entries))
		case slices.Equal(r.entries, ref.entries):
			w("  - %s: the base's layer unchanged; own entries **identical** to %s's\n", r.tool.Name(), ref.tool.Name())
		default:
			w("  - %s: **own entries differ** from %s's: %s\n", r.tool.Name(), ref.tool.Name(), mdEscape(strings.Join(r.entries, "; ")))
		}
	}
	switch {
	case rep.verifyErr != nil:
		w("- `imgctl verify`: %s\n", mdEscape(rep.verifyErr.Error()))
	case rep.verifyRead != "":
		w("- `imgctl verify --windows ltsc2025` on imgctl's result: %d requests, %s layer bytes. With `--layers`: %d "+
			"requests, %s layer bytes through the client; it reports reading %s (the image's own layer, never the base's).\n",
			rep.verifyPlain.Stats.Total(), thousands(rep.verifyPlain.Bytes.Layer),
			rep.verifyLayer.Stats.Total(), thousands(rep.verifyLayer.Bytes.Layer), rep.verifyRead)
	}
	w("\n<!-- build-case:%s:end -->\n", coldCase)
	return b.String()
}

// coldSamples are r's runs as samples.
func coldSamples(r *coldResult) []sample {
	var ss []sample
	for _, run := range r.runs {
		ss = append(ss, run.sample)
	}
	return ss
}

// coldEntryNames are the entry names of coldEntries lines, comma-separated.
func coldEntryNames(entries []string) string {
	var ns []string
	for _, e := range entries {
		if f := strings.Fields(e); len(f) > 1 {
			ns = append(ns, "`"+f[1]+"`")
		}
	}
	return strings.Join(ns, ", ")
}
