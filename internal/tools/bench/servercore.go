package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/internal/testing/buildtest"
)

// servercoreCase is the Windows build on a servercore-scale base (issue 27,
// point 4). It is opt-in: -cases must name it, as its base alone is
// gigabytes and every run of every row starts a fresh buildkitd.
const servercoreCase = "build-windows-servercore"

// Defaults of -servercore-size and -servercore-entries: the scale.
const (
	scDefaultSize    = 2 << 30
	scDefaultEntries = 100_000
)

// servercoreSelected reports whether the comma-separated -cases value
// names the servercore case: it is not part of the default selection.
func servercoreSelected(cases string) bool {
	return slices.Contains(strings.Split(cases, ","), servercoreCase)
}

// byteSize is a flag value in bytes: a number with an optional unit B,
// KiB, MiB, GiB, TiB (powers of 1024) or KB, MB, GB, TB (of 1000).
type byteSize int64

var sizeUnits = []struct {
	suffix string
	n      int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1},
}

func parseByteSize(s string) (int64, error) {
	num, mult := strings.TrimSpace(s), int64(1)
	for _, u := range sizeUnits {
		if n, ok := strings.CutSuffix(num, u.suffix); ok {
			num, mult = strings.TrimSpace(n), u.n
			break
		}
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || f*float64(mult) >= math.MaxInt64 {
		return 0, fmt.Errorf("invalid size %q: want a number with an optional unit such as 64MiB or 2GiB", s)
	}
	return int64(f * float64(mult)), nil
}

func (b *byteSize) Set(s string) error {
	n, err := parseByteSize(s)
	*b = byteSize(n)
	return err
}

// String is the size in the largest binary unit that divides it.
func (b *byteSize) String() string {
	n := int64(*b)
	for _, u := range []struct {
		suffix string
		n      int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.n == 0 {
			return strconv.FormatInt(n/u.n, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// peakRSS keeps the highest peak RSS (rusage Maxrss, KiB on Linux) of the
// processes it observed since the last take.
//
// Go starts a child with vfork semantics (CLONE_VM), and Linux counts the
// high-water mark of the memory the child shared until its exec, the
// bench's own, in the child's Maxrss. prepare resets the bench's high-water
// mark to its current RSS (clear_refs 5) after returning freed memory, so
// that what a child inherits is the bench's RSS at that moment, kept as
// floorKiB for the report.
type peakRSS struct {
	mu       sync.Mutex
	kib      int64
	floorKiB int64
	floorErr error
}

// prepare is called right before a child starts.
func (p *peakRSS) prepare() {
	if p == nil {
		return
	}
	debug.FreeOSMemory()
	err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	var kib int64
	if err == nil {
		var status []byte
		if status, err = os.ReadFile("/proc/self/status"); err == nil {
			kib, err = parseStatusKiB(string(status), "VmHWM")
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.floorKiB = max(p.floorKiB, kib)
	if err != nil && p.floorErr == nil {
		p.floorErr = fmt.Errorf("resetting the bench's peak RSS: %w", err)
	}
}

// observe records ps's peak RSS; a nil p or ps records nothing.
func (p *peakRSS) observe(ps *os.ProcessState) {
	if p == nil || ps == nil {
		return
	}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		p.mu.Lock()
		p.kib = max(p.kib, int64(ru.Maxrss))
		p.mu.Unlock()
	}
}

// take returns the peak since the last take and starts over.
func (p *peakRSS) take() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := p.kib
	p.kib = 0
	return k
}

// parseStatusKiB reads field (VmHWM: peak resident set size, VmRSS) in
// KiB from the text of /proc/PID/status.
func parseStatusKiB(status, field string) (int64, error) {
	sc := bufio.NewScanner(strings.NewReader(status))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			f := strings.Fields(v)
			if len(f) == 2 && f[1] == "kB" {
				return strconv.ParseInt(f[0], 10, 64)
			}
			return 0, fmt.Errorf("unexpected %s line %q", field, sc.Text())
		}
	}
	return 0, fmt.Errorf("no %s in status", field)
}

// argPair reports whether args (a command line) has flag followed by value.
func argPair(args []string, flag, value string) bool {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == flag && args[i+1] == value {
			return true
		}
	}
	return false
}

// daemonHWM is the peak RSS (VmHWM, KiB) of the buildkitd serving daemon,
// found in /proc by its --addr; read it before the daemon stops.
func daemonHWM(daemon *buildtest.Daemon) (int64, error) {
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return 0, err
	}
	for _, d := range dirs {
		raw, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || !argPair(strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00"), "--addr", daemon.Addr) {
			continue
		}
		status, err := os.ReadFile(filepath.Join(d, "status"))
		if err != nil {
			return 0, err
		}
		return parseStatusKiB(string(status), "VmHWM")
	}
	return 0, fmt.Errorf("no process with --addr %s", daemon.Addr)
}

// scRowKind is what a row runs.
type scRowKind int

const (
	scBuild       scRowKind = iota // a build on a fresh buildkitd
	scReadBase                     // crane blob | gzip -dc of every base layer
	scRegistryRow                  // a build into a repository an untimed build filled first
)

// scRow is one row of the case.
type scRow struct {
	name string
	kind scRowKind
	tool tool // the build tool, or crane for scReadBase
	rss  *peakRSS
	// cold: the row builds on the cold case's 157 MiB base.
	cold bool
	// cached says what was cached where, for the report.
	cached string
	// warmTags are the tags in the row's repository after its warm-up
	// build other than the warm-up's own (scRegistryRow).
	warmTags []string
	// skeletonBytes is the size of the skeletons the warm-up filed in the
	// registry skeleton cache (the entries' layers), summed.
	skeletonBytes int64
	runs          []scRun
	// ref is the Windows image the first successful build pushed; baseKept
	// and entries are read from it as in the cold case.
	ref      string
	baseKept bool
	entries  []string
	readErr  error
}

// scRun is one measured run of a row.
type scRun struct {
	coldRun
	clientKiB, daemonKiB int64 // peak RSS; daemonKiB 0 without a buildkitd
	daemonErr            error // reading buildkitd's VmHWM
}

// scRepo is the repository of a row's run: a fresh one per run, or for a
// registry row the one repository all its builds share.
func scRepo(host string, r *scRow, run int) string {
	if r.kind == scRegistryRow {
		return fmt.Sprintf("%s/bench/%s/%s", host, servercoreCase, repoSlug(r.name))
	}
	return fmt.Sprintf("%s/bench/%s/%s-run%d", host, servercoreCase, repoSlug(r.name), run)
}

// repoSlug is slug(s) as a repository path component takes it: no
// leading, trailing or repeated separators.
func repoSlug(s string) string {
	parts := strings.FieldsFunc(slug(s), func(r rune) bool { return r == '-' })
	return strings.Join(parts, "-")
}

// scTarget is the tag a row's run pushes: run 0 is the warm-up.
func scTarget(host string, r *scRow, run int) string {
	if r.kind == scRegistryRow {
		if run == 0 {
			return scRepo(host, r, run) + ":warmup"
		}
		return fmt.Sprintf("%s:run%d", scRepo(host, r, run), run)
	}
	return scRepo(host, r, run) + ":merged"
}

// scRows are the case's rows in report order, each with its own tool and
// private home (so that no row sees another's local skeleton cache).
func scRows(root, work string) ([]*scRow, error) {
	var rows []*scRow
	add := func(name string, kind scRowKind, cold bool, cached string, mk func(cmdTool) tool) error {
		h, err := newCmdTool(filepath.Join(work, "servercore-"+repoSlug(name)))
		if err != nil {
			return err
		}
		r := &scRow{name: name, kind: kind, cold: cold, cached: cached, rss: &peakRSS{}}
		h.rss = r.rss
		r.tool = mk(h)
		rows = append(rows, r)
		return nil
	}
	imgctlRow := func(extra ...string) func(cmdTool) tool {
		return func(h cmdTool) tool {
			return &imgctlBuild{imgctl: &imgctl{cmdTool: h, root: root}, extra: append(extra, buildPlainArgs...)}
		}
	}
	fresh := "a fresh target repository per run, so no registry skeleton cache"
	regCache := "one untimed warm-up build by the same command (fresh buildkitd, empty local cache) into " +
		"the same target repository R before the timed runs, each timed run tagging `R:runN`: the registry " +
		"skeleton cache is whatever that build stored in R (with the base's layers and the warm-up's image)"
	specs := []struct {
		name   string
		kind   scRowKind
		cold   bool
		cached string
		mk     func(cmdTool) tool
	}{
		{"imgctl", scBuild, false, "local skeleton cache empty, builder cache empty (fresh buildkitd), " + fresh, imgctlRow()},
		{"imgctl+registry-skeleton", scRegistryRow, false, "local skeleton cache empty, builder cache empty (fresh buildkitd); " + regCache, imgctlRow()},
		{"imgctl --windows-plain", scBuild, false, "local skeleton cache empty (the plain path makes no skeletons), builder cache empty (fresh buildkitd), " + fresh, imgctlRow("--windows-plain")},
		{"buildctl", scBuild, false, "builder cache empty (fresh buildkitd), a fresh target repository per run; no imgctl cache is involved",
			func(h cmdTool) tool { return &buildctl{cmdTool: h, root: root} }},
		{"crane blob | gzip -dc", scReadBase, false, "not a build: nothing cached (crane caches nothing), no buildkitd",
			func(h cmdTool) tool { return &crane{h} }},
		{"imgctl+registry-skeleton (157 MiB base)", scRegistryRow, true, "as `imgctl+registry-skeleton`, on the cold case's base: " +
			"local skeleton cache empty, builder cache empty (fresh buildkitd); " + regCache, imgctlRow()},
	}
	for _, s := range specs {
		if err := add(s.name, s.kind, s.cold, s.cached, s.mk); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// scBase is a base the rows build on.
type scBase struct {
	ref    string
	layers []v1.Descriptor
}

// scReport is what the servercore case measured.
type scReport struct {
	runs            int
	size            int64
	entries         int
	layers          string // scLayerSummary
	base, cold      scBase
	genTime         time.Duration // writing the base's layer files
	pushTime        time.Duration
	rows            []*scRow
	gzip, craneInfo string
}

// runServercore runs the servercore case: a servercore-shaped base of
// o.scSize content bytes and o.scEntries entries pushed to the CNCF
// distribution registry, and every row o.buildRuns times, each run of a
// build on a fresh buildkitd. It returns the case's RESULTS.md section and
// goals.
func runServercore(ctx context.Context, o options, root, binDir, work string, log io.Writer) (string, []goal, error) {
	if _, err := servercorePlan(int64(o.scSize), o.scEntries, scLayers); err != nil {
		return "", nil, fmt.Errorf("-servercore-entries: %w", err)
	}
	rows, err := scRows(root, work)
	if err != nil {
		return "", nil, err
	}
	if rows = filter(rows, o.tools, func(r *scRow) string { return r.name }); len(rows) == 0 {
		return "", nil, nil
	}
	rep := &scReport{runs: o.buildRuns, size: int64(o.scSize), entries: o.scEntries, rows: rows}
	var tools []tool
	for _, r := range rows {
		fmt.Fprintf(log, "installing %s\n", r.tool.Name())
		if err := r.tool.Install(ctx, binDir); err != nil {
			return "", nil, err
		}
		tools = append(tools, r.tool)
	}
	if rep.row(scRowReadBase) != nil {
		if rep.gzip, err = exec.LookPath("gzip"); err != nil {
			return "", nil, fmt.Errorf("%s needs gzip for its row %s: %w", servercoreCase, scRowReadBase, err)
		}
	}
	d, err := startPreparedDistEnv(ctx, false, tools)
	if err != nil {
		return "", nil, err
	}
	defer d.Close()
	if err := rep.pushBases(ctx, d, work, log); err != nil {
		return "", nil, err
	}
	ctxDir := filepath.Join(work, "servercore-context")
	if err := writeColdContext(ctxDir); err != nil {
		return "", nil, err
	}
	host := d.reg.Host()
	for _, r := range rows {
		if r.kind != scRegistryRow {
			continue
		}
		fmt.Fprintf(log, "  %s: untimed warm-up of %s\n", servercoreCase, r.name)
		b := rep.baseOf(r)
		run, _, err := rep.build(ctx, d, r, b, ctxDir, scTarget(host, r, 0))
		if err != nil {
			return "", nil, fmt.Errorf("%s: warm-up build of %s: %w", servercoreCase, r.name, err)
		}
		fmt.Fprintf(log, "  %s warm-up %-40s %s\n", servercoreCase, r.name, run.status())
		if r.warmTags, err = scTags(ctx, d.env, scRepo(host, r, 0)); err != nil {
			return "", nil, err
		}
		if r.skeletonBytes, err = scSkeletonBytes(ctx, d.env, scRepo(host, r, 0), r.warmTags); err != nil {
			return "", nil, err
		}
	}
	for n := range o.buildRuns {
		for i := range rows {
			r := rows[(i+n)%len(rows)]
			var run scRun
			var ref string
			var err error
			if r.kind == scReadBase {
				run, err = rep.readBase(ctx, d, r)
			} else {
				run, ref, err = rep.build(ctx, d, r, rep.baseOf(r), ctxDir, scTarget(host, r, n+1))
			}
			if run.Err == nil {
				run.Err = err
			}
			r.runs = append(r.runs, run)
			if err == nil && ref != "" && r.ref == "" {
				r.ref = ref
				r.baseKept, r.entries, r.readErr = readColdImage(ctx, d.env, ref, rep.baseOf(r).layers)
			}
			fmt.Fprintf(log, "  %s run %d %-40s %s\n", servercoreCase, n+1, r.name, run.status())
			if ctx.Err() != nil {
				return "", nil, ctx.Err()
			}
		}
	}
	return rep.section(ctx), rep.goals(), nil
}

func (r scRun) status() string {
	if r.Err != nil {
		return "FAILED: " + r.Err.Error()
	}
	return fmt.Sprintf("base down %d, read %d, up %d, %d requests, client %d KiB, buildkitd %d KiB, %v",
		r.baseDown, r.baseRead, r.baseUp, r.Stats.Total(), r.clientKiB, r.daemonKiB, r.Wall.Round(time.Millisecond))
}

// baseOf is the base row r builds on.
func (rep *scReport) baseOf(r *scRow) scBase {
	if r.cold {
		return rep.cold
	}
	return rep.base
}

// pushBases writes and pushes the servercore base, removing its layer
// files once pushed, and the cold case's base when a row needs it.
func (rep *scReport) pushBases(ctx context.Context, d *distEnv, work string, log io.Writer) error {
	dir := filepath.Join(work, "servercore-layers")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var seed [32]byte
	if _, err := rand.Read(seed[:]); err != nil {
		return err
	}
	fmt.Fprintf(log, "%s: writing a servercore-shaped base of %s content bytes, %d entries\n", servercoreCase, thousands(rep.size), rep.entries)
	start := time.Now()
	img, files, err := servercoreBase(dir, rep.size, rep.entries, seed, log)
	if err != nil {
		return err
	}
	rep.genTime = time.Since(start)
	rep.layers = scLayerSummary(files)
	fmt.Fprintf(log, "  wrote it in %v: %s\n", rep.genTime.Round(time.Millisecond), rep.layers)
	start = time.Now()
	ref, _, err := d.dist.PushTag("bases/servercore:ltsc2025", img, remote.WithContext(ctx))
	if err != nil {
		return err
	}
	rep.pushTime = time.Since(start)
	m, err := img.Manifest()
	if err != nil {
		return err
	}
	rep.base = scBase{ref: ref.String(), layers: m.Layers}
	fmt.Fprintf(log, "  pushed %s in %v\n", ref, rep.pushTime.Round(time.Millisecond))
	for _, f := range files {
		if err := os.Remove(f.path); err != nil {
			return err
		}
	}
	for _, r := range rep.rows {
		if r.cold {
			fmt.Fprintf(log, "%s: pushing the cold case's %d MiB base\n", servercoreCase, coldPayload>>20)
			cref, cl, err := pushColdBase(d)
			if err != nil {
				return err
			}
			rep.cold = scBase{ref: cref.String(), layers: cl}
			break
		}
	}
	return nil
}

// build runs one build of row r on a fresh buildkitd, whose peak RSS it
// reads before stopping it, with r's local skeleton cache emptied first.
func (rep *scReport) build(ctx context.Context, d *distEnv, r *scRow, b scBase, ctxDir, target string) (scRun, string, error) {
	daemon, err := startColdDaemon(ctx, d)
	if err != nil {
		return scRun{coldRun: coldRun{sample: sample{Err: err}}}, "", err
	}
	defer daemon.Close()
	r.rss.take()
	cr, ref, err := coldBuildOn(ctx, d, daemon, r.tool, b.ref, b.layers, ctxDir, target)
	run := scRun{coldRun: cr, clientKiB: r.rss.take()}
	run.daemonKiB, run.daemonErr = daemonHWM(daemon)
	return run, ref, err
}

// readBase reads every base layer once, in turn, as `crane blob
// REF@DIGEST | gzip -dc > /dev/null` does; the client's RSS is crane's.
func (rep *scReport) readBase(ctx context.Context, d *distEnv, r *scRow) (scRun, error) {
	c := r.tool.(*crane)
	ref, err := name.ParseReference(rep.base.ref, name.Insecure)
	if err != nil {
		return scRun{}, err
	}
	repoName := ref.Context().Name()
	var kib int64
	run := scRun{coldRun: coldRun{sample: d.env.measure(func() error {
		for _, l := range rep.base.layers {
			k, err := craneGunzip(ctx, c, rep.gzip, repoName+"@"+l.Digest.String())
			kib = max(kib, k)
			if err != nil {
				return err
			}
		}
		return nil
	})}}
	fetched, _ := d.bytes.blobFlows()
	for _, l := range rep.base.layers {
		run.baseRead += fetched["client "+l.Digest.String()]
	}
	run.clientKiB = kib
	return run, run.Err
}

// craneGunzip runs `crane --insecure blob REF | gzip -dc > /dev/null` and
// returns crane's peak RSS (KiB).
func craneGunzip(ctx context.Context, c *crane, gzip, ref string) (int64, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	rss := c.rss
	cr := exec.CommandContext(ctx, c.bin, "--insecure", "blob", ref)
	cr.Env, cr.Dir, cr.Stdout = c.env(), c.home, pw
	gz := exec.CommandContext(ctx, gzip, "-dc")
	gz.Stdin = pr // stdout: /dev/null
	var crErr, gzErr bytes.Buffer
	cr.Stderr, gz.Stderr = &crErr, &gzErr
	if err := gz.Start(); err != nil {
		pr.Close()
		pw.Close()
		return 0, err
	}
	pr.Close()
	rss.prepare()
	err = cr.Run()
	pw.Close()
	gerr := gz.Wait()
	rss.observe(cr.ProcessState)
	kib := rss.take()
	if err != nil {
		return kib, fmt.Errorf("crane blob %s: %w: %s", ref, err, tail(crErr.String(), 3))
	}
	if gerr != nil {
		return kib, fmt.Errorf("gzip -dc of %s: %w: %s", ref, gerr, tail(gzErr.String(), 3))
	}
	return kib, nil
}

// scSkeletonBytes sums the skeletons of the registry skeleton cache
// entries among tags of repo (imgctl-skeleton-v1-*).
func scSkeletonBytes(ctx context.Context, e *env, repo string, tags []string) (int64, error) {
	var n int64
	for _, t := range tags {
		if !strings.HasPrefix(t, "imgctl-skeleton-") {
			continue
		}
		ref, err := name.ParseReference(repo+":"+t, name.Insecure)
		if err != nil {
			return 0, err
		}
		img, err := remote.Image(ref, e.remote(ctx)...)
		if err != nil {
			return 0, fmt.Errorf("reading skeleton cache entry %s: %w", ref, err)
		}
		m, err := img.Manifest()
		if err != nil {
			return 0, err
		}
		for _, l := range m.Layers {
			n += l.Size
		}
	}
	return n, nil
}

// scTags lists the tags of repo other than the warm-up's.
func scTags(ctx context.Context, e *env, repo string) ([]string, error) {
	r, err := name.NewRepository(repo, name.Insecure)
	if err != nil {
		return nil, err
	}
	tags, err := remote.List(r, e.remote(ctx)...)
	if err != nil {
		return nil, fmt.Errorf("listing the tags of %s: %w", repo, err)
	}
	return slices.DeleteFunc(tags, func(t string) bool { return t == "warmup" }), nil
}
