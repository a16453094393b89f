package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	controlapi "github.com/moby/buildkit/api/services/control"

	"github.com/imgctl/imgctl/internal/testing/buildtest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/snapshot"
)

// bakeCase measures imgctl bake (issue 28, point 6): a bake of N targets
// against the same N targets built by imgctl build one after the other,
// on one builder, with its platforms split over two, and with whole
// targets spread over a pool of two. It is opt-in: -cases must name it,
// as it starts two buildkitd daemons and runs N + 3 imgctl processes per
// run (N builds, three bakes).
const bakeCase = "bake"

// Defaults of -bake-targets and -bake-jobs.
const (
	bakeDefaultTargets = 4
	bakeDefaultJobs    = 2
)

const (
	// bakeBasePayload is the random payload of the nanoserver-shaped base's
	// one layer (random bytes do not compress).
	bakeBasePayload = 16 << 20
	// bakeRelease is the Windows release every target builds.
	bakeRelease = "ltsc2025"
	// bakeSlowerLimit: the bake on one builder within this factor of the
	// builds one after the other ("no slower", with 5% for noise).
	bakeSlowerLimit = 1.05
)

// bakeSelected reports whether the comma-separated -cases value names the
// bake case: it is not part of the default selection.
func bakeSelected(cases string) bool {
	return slices.Contains(strings.Split(cases, ","), bakeCase)
}

// bakeDockerfile is every target's Dockerfile: a Linux and a Windows final
// stage that only copy files (no RUN: a Linux builder builds both, and
// the Windows one is grafted onto its base). NAME is the target's name:
// each target copies its own file, so no two targets share a layer.
const bakeDockerfile = `ARG LINUX_BASE=gcr.io/distroless/static-debian12:nonroot
ARG WINDOWS_BASE=mcr.microsoft.com/windows/nanoserver:ltsc2025
FROM ${LINUX_BASE} AS final-linux
ARG NAME=none
COPY ${NAME}.txt /app/name.txt

FROM ${WINDOWS_BASE} AS final-windows
ARG NAME=none
COPY ${NAME}.txt /app/name.txt
COPY app.exe /app/app.exe
ENTRYPOINT ["C:\\app\\app.exe"]

FROM final-${TARGETOS}
`

// bakeSpec is what every run builds, and where.
type bakeSpec struct {
	host        string // the registry, HOST:PORT
	ctxDir      string // the build context (absolute)
	linuxBase   string // HOST/bases/distroless/static:nonroot
	windowsBase string // HOST/bases/nanoserver:{ltsc}
	addrA       string // builder A: every row's
	addrB       string // builder B: the two-builder row's Windows node, half of the pool row's pool
	targets     int
	jobs        int
}

// bakeRowKind is what a row runs.
type bakeRowKind int

const (
	bakeBuilds      bakeRowKind = iota // imgctl build × N, one after the other, on builder A
	bakeOneBuilder                     // imgctl bake on builder A
	bakeTwoBuilders                    // imgctl bake, linux/amd64 on A, windows on B
	bakePool                           // imgctl bake, a pool of A and B: each target wholly on one
)

// bakeKinds are the rows in report order.
var bakeKinds = []bakeRowKind{bakeBuilds, bakeOneBuilder, bakeTwoBuilders, bakePool}

// slug names the row's repositories.
func (k bakeRowKind) slug() string {
	return [...]string{"builds", "bake-1-builder", "bake-2-builders", "bake-pool"}[k]
}

// bakeFillLabel names the run, untimed and before the pool row's warm-up,
// that bakes every target on builder B alone (bakeEnv.fillB).
const bakeFillLabel = "fill-b"

// bakeRowName is the row's name in the report.
func bakeRowName(k bakeRowKind, targets, jobs int) string {
	switch k {
	case bakeBuilds:
		return fmt.Sprintf("imgctl build ×%d, one after the other", targets)
	case bakeOneBuilder:
		return fmt.Sprintf("imgctl bake --jobs %d, 1 builder", jobs)
	case bakeTwoBuilders:
		return fmt.Sprintf("imgctl bake --jobs %d, 2 builders", jobs)
	}
	return fmt.Sprintf("imgctl bake --jobs %d, a pool of 2 builders", jobs)
}

// bakeTargetName is target i's name (from 0): t1, t2...
func bakeTargetName(i int) string { return "t" + strconv.Itoa(i+1) }

// bakeRunLabel names run n of a row: 0 is the untimed warm-up.
func bakeRunLabel(n int) string {
	if n == 0 {
		return "warmup"
	}
	return "run" + strconv.Itoa(n)
}

// bakeTags are the tags of run n of row k, one per target, each in a
// repository of its own that no other run writes:
// HOST/bench/bake/<row>/<run>/tI:v1.
func bakeTags(host string, k bakeRowKind, n, targets int) []string {
	return bakeLabelTags(host, k, bakeRunLabel(n), targets)
}

// bakeLabelTags are the tags of the run of row k labelled label (a
// bakeRunLabel or bakeFillLabel), one per target:
// HOST/bench/bake/<row>/<label>/tI:v1.
func bakeLabelTags(host string, k bakeRowKind, label string, targets int) []string {
	var tags []string
	for i := range targets {
		tags = append(tags, fmt.Sprintf("%s/bench/%s/%s/%s/%s:v1", host, bakeCase, k.slug(), label, bakeTargetName(i)))
	}
	return tags
}

// bakeTargetHCL is target i's block of the bake file, pushed to tag.
func bakeTargetHCL(s bakeSpec, i int, tag string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "target %q {\n", bakeTargetName(i))
	fmt.Fprintf(&b, "  context   = %q\n", s.ctxDir)
	fmt.Fprintf(&b, "  platforms = [\"linux/amd64\", %q]\n", bakeRelease)
	b.WriteString("  args = {\n")
	fmt.Fprintf(&b, "    LINUX_BASE   = %q\n", s.linuxBase)
	fmt.Fprintf(&b, "    NAME         = %q\n", bakeTargetName(i))
	fmt.Fprintf(&b, "    WINDOWS_BASE = %q\n", s.windowsBase)
	b.WriteString("  }\n")
	fmt.Fprintf(&b, "  tags = [%q]\n", tag)
	b.WriteString("}\n")
	return b.String()
}

// bakeHCL is the bake file of one run: a default group of every target,
// target i pushed to tags[i].
func bakeHCL(s bakeSpec, tags []string) string {
	var names []string
	for i := range tags {
		names = append(names, strconv.Quote(bakeTargetName(i)))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "group \"default\" {\n  targets = [%s]\n}\n", strings.Join(names, ", "))
	for i, tag := range tags {
		b.WriteString("\n" + bakeTargetHCL(s, i, tag))
	}
	return b.String()
}

// bakeBuildOp is target i as one imgctl build on builder A: the
// platforms, release, bases and args bake derives from its block.
func bakeBuildOp(s bakeSpec, i int, tag string) buildOp {
	return buildOp{
		Target:    tag,
		Addr:      s.addrA,
		Context:   s.ctxDir,
		Linux:     []string{"linux/amd64"},
		Windows:   []buildWindowsVariant{{Release: bakeRelease, Base: strings.ReplaceAll(s.windowsBase, "{ltsc}", bakeRelease)}},
		BuildArgs: [][2]string{{"LINUX_BASE", s.linuxBase}, {"NAME", bakeTargetName(i)}},
	}
}

// bakeBuildArgs is target i's imgctl build command line: as the build
// cases run it (--progress quiet --no-verify), with imgctl's default
// provenance, as bake's.
func bakeBuildArgs(s bakeSpec, i int, tag string) []string {
	return imgctlBuildArgs(bakeBuildOp(s, i, tag), false)
}

// bakeBaseArgs is every imgctl bake command line of the case for the
// bake file, without the builders.
func bakeBaseArgs(s bakeSpec, file string) []string {
	return []string{"bake", "-f", file, "--progress", "quiet", "--no-verify", "--jobs", strconv.Itoa(s.jobs)}
}

// bakeArgs is the imgctl bake command line of row k for the bake file:
// builder A; linux/amd64 on A and windows on B; or both platforms named
// on A and on B, a pool.
func bakeArgs(s bakeSpec, k bakeRowKind, file string) []string {
	args := bakeBaseArgs(s, file)
	switch k {
	case bakeTwoBuilders:
		return append(args, "--node", "linux/amd64="+s.addrA, "--node", "windows="+s.addrB)
	case bakePool:
		return append(args, "--node", "linux="+s.addrA, "--node", "windows="+s.addrA,
			"--node", "linux="+s.addrB, "--node", "windows="+s.addrB)
	}
	return append(args, "--builder", s.addrA)
}

// bakeFillArgs is the command line of bakeEnv.fillB: the bake file on
// builder B alone.
func bakeFillArgs(s bakeSpec, file string) []string {
	return append(bakeBaseArgs(s, file), "--builder", s.addrB)
}

// bakeRow is one row of the case: its own imgctl with a private home.
type bakeRow struct {
	kind   bakeRowKind
	name   string
	tool   *imgctl
	warmup time.Duration
	runs   []bakeRun
}

// bakeRun is one timed run of a row.
type bakeRun struct {
	sample
	// solves are the solves builders A and B recorded in their build
	// history during the run, by the platform they were asked for.
	solves    [2]map[string]int
	solvesErr error
	// checkErr is what reading back the run's tags found wrong.
	checkErr error
}

// bakeReport is what the bake case measured.
type bakeReport struct {
	runs, targets, jobs int
	spec                bakeSpec
	baseSize            int64 // the Windows base's layer, compressed
	rows                []*bakeRow
	load                [2]string
	now                 time.Time // zero: time.Now()
}

// bakeEnv is the running case: the registry, both daemons, the spec.
type bakeEnv struct {
	d       *distEnv
	daemons [2]*buildtest.Daemon
	spec    bakeSpec
	work    string
}

// runBake runs the bake case: the CNCF distribution registry behind the
// bench's counting proxy with a distroless-like and a nanoserver-shaped
// base, two fresh buildkitd daemons kept for the whole case, and per row
// one untimed warm-up run (the pool row's after bakeEnv.fillB), then
// o.buildRuns timed runs, the order of the rows rotating from run to run. It returns the case's RESULTS.md section
// and goals.
func runBake(ctx context.Context, o options, root, binDir, work string, log io.Writer) (string, []goal, error) {
	if len(filter([]string{"imgctl"}, o.tools, func(s string) string { return s })) == 0 {
		return "", nil, nil // every row is imgctl's
	}
	rep := &bakeReport{runs: o.buildRuns, targets: o.bakeTargets, jobs: o.bakeJobs}
	var tools []tool
	for _, k := range bakeKinds {
		h, err := newCmdTool(filepath.Join(work, "bake-"+k.slug()))
		if err != nil {
			return "", nil, err
		}
		r := &bakeRow{kind: k, name: bakeRowName(k, o.bakeTargets, o.bakeJobs), tool: &imgctl{cmdTool: h, root: root}}
		fmt.Fprintf(log, "installing imgctl for %s\n", r.name)
		if err := r.tool.Install(ctx, binDir); err != nil {
			return "", nil, err
		}
		rep.rows, tools = append(rep.rows, r), append(tools, r.tool)
	}
	d, err := startPreparedDistEnv(ctx, false, tools)
	if err != nil {
		return "", nil, err
	}
	defer d.Close()
	be := &bakeEnv{d: d, work: filepath.Join(work, "bake")}
	fmt.Fprintf(log, "%s: pushing the bases\n", bakeCase)
	if rep.baseSize, err = be.pushBases(); err != nil {
		return "", nil, err
	}
	be.spec.ctxDir, be.spec.targets, be.spec.jobs = filepath.Join(be.work, "context"), o.bakeTargets, o.bakeJobs
	if err := writeBakeContext(be.spec.ctxDir, o.bakeTargets); err != nil {
		return "", nil, err
	}
	for i := range be.daemons {
		fmt.Fprintf(log, "%s: starting buildkitd %c\n", bakeCase, 'A'+i)
		if be.daemons[i], err = startColdDaemon(ctx, d); err != nil {
			return "", nil, err
		}
		defer be.daemons[i].Close()
	}
	be.spec.addrA, be.spec.addrB = be.daemons[0].Addr, be.daemons[1].Addr
	rep.spec = be.spec
	for _, r := range rep.rows {
		if r.kind == bakePool {
			fmt.Fprintf(log, "%s: baking every target on builder B alone before %s\n", bakeCase, r.name)
			if err := be.fillB(ctx, r); err != nil {
				return "", nil, fmt.Errorf("%s: filling builder B before %s: %w", bakeCase, r.name, err)
			}
		}
		run, err := be.run(ctx, r, 0)
		if err == nil {
			err = run.checkErr
		}
		if err != nil {
			return "", nil, fmt.Errorf("%s: warm-up of %s: %w", bakeCase, r.name, err)
		}
		r.warmup = run.Wall
		fmt.Fprintf(log, "  %s warm-up %-44s %v\n", bakeCase, r.name, run.Wall.Round(time.Millisecond))
	}
	rep.load[0] = loadAvg()
	for n := range o.buildRuns {
		for i := range rep.rows {
			r := rep.rows[(i+n)%len(rep.rows)]
			run, _ := be.run(ctx, r, n+1)
			r.runs = append(r.runs, run)
			fmt.Fprintf(log, "  %s run %d %-44s %s\n", bakeCase, n+1, r.name, run.status())
			if ctx.Err() != nil {
				return "", nil, ctx.Err()
			}
		}
	}
	rep.load[1] = loadAvg()
	return rep.section(ctx), rep.goals(), nil
}

func (r bakeRun) status() string {
	if r.Err != nil {
		return "FAILED: " + r.Err.Error()
	}
	s := fmt.Sprintf("%d requests, %v; solves A: %s; B: %s", r.Stats.Total(), r.Wall.Round(time.Millisecond),
		solveText(r.solves[0]), solveText(r.solves[1]))
	if r.checkErr != nil {
		s += "; CHECK FAILED: " + r.checkErr.Error()
	}
	return s
}

// pushBases pushes a distroless-like linux/amd64 image and a
// nanoserver-shaped ltsc2025 base with bakeBasePayload random bytes in
// its one layer, and sets the spec's host and bases; it returns the
// Windows base's layer size.
func (be *bakeEnv) pushBases() (int64, error) {
	host := be.d.reg.Host()
	be.spec.host = host
	linux, err := buildtest.DistrolessLike("amd64")
	if err != nil {
		return 0, err
	}
	if _, _, err := be.d.dist.PushTag("bases/distroless/static:nonroot", linux); err != nil {
		return 0, err
	}
	be.spec.linuxBase = host + "/bases/distroless/static:nonroot"
	pad := make([]byte, bakeBasePayload)
	if _, err := rand.Read(pad); err != nil {
		return 0, err
	}
	win, err := regtest.WindowsBaseImage(regtest.OSVersionLTSC2025, regtest.WithSeed(string(pad)))
	if err != nil {
		return 0, err
	}
	m, err := win.Manifest()
	if err != nil {
		return 0, err
	}
	if _, _, err := be.d.dist.PushTag("bases/nanoserver:"+bakeRelease, win); err != nil {
		return 0, err
	}
	be.spec.windowsBase = host + "/bases/nanoserver:{ltsc}"
	var size int64
	for _, l := range m.Layers {
		size += l.Size
	}
	return size, nil
}

// writeBakeContext writes bakeDockerfile, app.exe and one NAME.txt per
// target into dir.
func writeBakeContext(dir string, targets int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := map[string]string{"Dockerfile": bakeDockerfile, "app.exe": "MZ bake bench\n"}
	for i := range targets {
		files[bakeTargetName(i)+".txt"] = "target " + bakeTargetName(i) + "\n"
	}
	for n, c := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// fillB bakes, untimed, every target on builder B alone with row r's
// imgctl into tags of their own (HOST/bench/bake/<row>/fill-b/tI:v1) and
// reads them back. The two-builder row's warm-up leaves B only the
// Windows solves; after this B holds every target's Linux and Windows
// solve, so that whichever builder the pool gives a target in a timed run,
// its solves are cache hits.
func (be *bakeEnv) fillB(ctx context.Context, r *bakeRow) error {
	s := be.spec
	tags := bakeLabelTags(s.host, r.kind, bakeFillLabel, s.targets)
	file := filepath.Join(be.work, fmt.Sprintf("%s-%s.hcl", r.kind.slug(), bakeFillLabel))
	if err := os.WriteFile(file, []byte(bakeHCL(s, tags)), 0o644); err != nil {
		return err
	}
	if _, err := r.tool.exec(ctx, bakeFillArgs(s, file)...); err != nil {
		return fmt.Errorf("%w (buildkitd B log: %s)", err, be.daemons[1].LogTail(5))
	}
	return checkBakeTags(ctx, be.d.env, tags)
}

// run runs run n of row r (0: the warm-up), timed as one sample: the N
// builds in turn, or the one bake (its bake file written before). It then
// reads both builders' history of the run and the run's tags back.
func (be *bakeEnv) run(ctx context.Context, r *bakeRow, n int) (bakeRun, error) {
	s := be.spec
	tags := bakeTags(s.host, r.kind, n, s.targets)
	fn := func() error {
		for i, tag := range tags {
			if _, err := r.tool.exec(ctx, bakeBuildArgs(s, i, tag)...); err != nil {
				return fmt.Errorf("target %s: %w", bakeTargetName(i), err)
			}
		}
		return nil
	}
	if r.kind != bakeBuilds {
		file := filepath.Join(be.work, fmt.Sprintf("%s-%s.hcl", r.kind.slug(), bakeRunLabel(n)))
		if err := os.WriteFile(file, []byte(bakeHCL(s, tags)), 0o644); err != nil {
			return bakeRun{sample: sample{Err: err}}, err
		}
		fn = func() error {
			_, err := r.tool.exec(ctx, bakeArgs(s, r.kind, file)...)
			return err
		}
	}
	from := time.Now()
	run := bakeRun{sample: be.d.env.measure(fn)}
	to := time.Now()
	if run.Err != nil {
		run.Err = fmt.Errorf("%w (buildkitd A log: %s; B: %s)", run.Err, be.daemons[0].LogTail(5), be.daemons[1].LogTail(5))
		return run, run.Err
	}
	for i, d := range be.daemons {
		var err error
		if run.solves[i], err = daemonSolves(ctx, d, from, to); err != nil && run.solvesErr == nil {
			run.solvesErr = err
		}
	}
	run.checkErr = checkBakeTags(ctx, be.d.env, tags)
	return run, nil
}

// daemonSolves counts the solves in d's build history created between
// from and to, by the platform each asked for (the frontend's platform
// attribute). Base resolutions are not in the history.
func daemonSolves(ctx context.Context, d *buildtest.Daemon, from, to time.Time) (map[string]int, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := d.Client(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	stream, err := c.ControlClient().ListenBuildHistory(ctx, &controlapi.BuildHistoryRequest{EarlyExit: true})
	if err != nil {
		return nil, fmt.Errorf("build history of %s: %w", d.Addr, err)
	}
	byRef := map[string]string{}
	for {
		ev, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("build history of %s: %w", d.Addr, err)
		}
		rec := ev.Record
		if rec == nil || rec.CreatedAt == nil {
			continue
		}
		if t := rec.CreatedAt.AsTime(); t.Before(from) || t.After(to) {
			continue
		}
		p := rec.FrontendAttrs["platform"]
		if p == "" {
			p = "?"
		}
		byRef[rec.Ref] = p
	}
	out := map[string]int{}
	for _, p := range byRef {
		out[p]++
	}
	return out, nil
}

// solveText formats solve counts: "4× `linux/amd64`", sorted by platform;
// "none" for none.
func solveText(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, p := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%d× `%s`", m[p], p))
	}
	return strings.Join(parts, ", ")
}

// bakeWantPlatforms are the platforms of every target's index, sorted.
func bakeWantPlatforms() []string {
	return []string{"linux/amd64", "windows/amd64:" + regtest.OSVersionLTSC2025}
}

// checkBakeTags reads every tag back: an index of bakeWantPlatforms
// (besides attestation manifests).
func checkBakeTags(ctx context.Context, e *env, tags []string) error {
	var errs []error
	for _, tag := range tags {
		ref, err := name.ParseReference(tag, name.Insecure)
		if err != nil {
			return err
		}
		idx, err := remote.Index(ref, e.remote(ctx)...)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", tag, err))
			continue
		}
		im, err := idx.IndexManifest()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", tag, err))
			continue
		}
		var plats []string
		for _, m := range im.Manifests {
			if m.Platform != nil && !snapshot.IsAttestation(m) {
				plats = append(plats, m.Platform.String())
			}
		}
		slices.Sort(plats)
		if !slices.Equal(plats, bakeWantPlatforms()) {
			errs = append(errs, fmt.Errorf("%s: platforms %v, want %v", tag, plats, bakeWantPlatforms()))
		}
	}
	return errors.Join(errs...)
}
