package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/imgctl/imgctl/internal/testing/buildtest"
)

// buildWindows are the Windows variants of the build-windows case.
var buildWindows = []string{"ltsc2022", "ltsc2025"}

// buildLinux are the Linux platforms of both build cases.
var buildLinux = []string{"linux/amd64", "linux/arm64"}

// buildOp builds examples/hello and pushes the result under Target.
// Linux platforms are solved as one solve; each Windows variant is a solve
// of its own with WINDOWS_BASE set to its base.
type buildOp struct {
	Target    string // HOST/bench/<case>/<tool>-runN:merged
	Addr      string // buildkitd address
	Context   string // examples/hello
	Linux     []string
	Windows   []buildWindowsVariant
	BuildArgs [][2]string // in order, without WINDOWS_BASE
	// record, when set, receives the references a tool pushed in place of
	// one tag at Target (buildctl's per-solve digests).
	record func(target string, refs []string)
}

// buildWindowsVariant is one LTSC release and its base image.
type buildWindowsVariant struct {
	Release, Base string
}

func (buildOp) opName() string { return "build" }

// buildCase builds examples/hello with every build tool against one
// buildkitd whose cache a prior, untimed build of the same inputs warmed.
type buildCase struct {
	name, title string
	windows     bool

	env      *buildEnv
	mu       sync.Mutex
	recorded map[string][]string // target -> pushed references, for tools without one tag
}

// buildEnv is what both build cases share: the seeded bases and the daemon.
type buildEnv struct {
	root   string
	addr   string
	bases  buildtest.Bases
	daemon *buildtest.Daemon
}

func (c *buildCase) Name() string  { return c.name }
func (c *buildCase) Title() string { return c.title }

// buildCases returns the build cases in report order.
func buildCases() []*buildCase {
	return []*buildCase{
		{name: "build-linux", title: "Build examples/hello for linux/amd64 and linux/arm64: imgctl build against buildctl"},
		{name: "build-windows", title: "Build examples/hello for Linux and Windows ltsc2022/ltsc2025: imgctl build against buildctl", windows: true},
	}
}

func buildCaseName(c *buildCase) string { return c.name }

// Setup does nothing per case: runBuildCases seeds the bases and starts the daemon.
func (c *buildCase) Setup(context.Context, *env) error { return nil }

func (c *buildCase) Op(target string) op {
	b := c.env.bases
	o := buildOp{
		Target:    target,
		Addr:      c.env.addr,
		Context:   filepath.Join(c.env.root, "examples", "hello"),
		Linux:     buildLinux,
		BuildArgs: [][2]string{{"GOLANG_IMAGE", b.Golang}, {"LINUX_BASE", b.Distroless}},
		record:    c.record,
	}
	if c.windows {
		o.Windows = []buildWindowsVariant{{"ltsc2022", b.Nanoserver2022}, {"ltsc2025", b.Nanoserver2025}}
	}
	return o
}

func (c *buildCase) record(target string, refs []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.recorded == nil {
		c.recorded = map[string][]string{}
	}
	c.recorded[target] = refs
}

// refs is what a run into target pushed: the recorded references, or the tag.
func (c *buildCase) refs(target string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.recorded[target]; ok {
		return r
	}
	return []string{target}
}

func (c *buildCase) Check(ctx context.Context, target string) ([]finding, error) {
	return checkBuild(ctx, c.refs(target), c.windows)
}

// buildRowsNote explains the imgctl rows beside the one compared with buildctl.
const buildRowsNote = " The `imgctl+provenance` row is imgctl's default, without `--provenance=false`: BuildKit adds " +
	"a SLSA provenance attestation (mode=min) per image, which the index carries. A row `imgctl@REV`, when present, " +
	"is imgctl built from that earlier commit, with the same command line less `--provenance=false`: the figures " +
	"before the supply-chain work, measured in this run."

func (c *buildCase) Describe() string {
	if !c.windows {
		return "`examples/hello` (cross-compiled Go on a golang-like base, final stage on a distroless-like index) " +
			"for linux/amd64 and linux/arm64. Both tools do one solve of both platforms and push one index. " +
			"imgctl: `imgctl build --builder ADDR --progress quiet --provenance=false --no-verify --platform linux/amd64,linux/arm64 " +
			"-t TARGET --build-arg GOLANG_IMAGE=HOST/golang:1.26 --build-arg LINUX_BASE=HOST/distroless/static:nonroot " +
			"examples/hello`. buildctl: `buildctl --addr ADDR build --frontend dockerfile.v0 --local context=examples/hello " +
			"--local dockerfile=examples/hello --opt platform=linux/amd64,linux/arm64 --opt build-arg:GOLANG_IMAGE=... " +
			"--opt build-arg:LINUX_BASE=... --output type=image,name=TARGET,push=true`. imgctl's result is that same " +
			"index, which BuildKit pushes to the tag itself, with the base annotations added; imgctl's own requests " +
			"are one handshake, the tag check and one GET of the final base, which the solve then uses by digest, " +
			"so BuildKit does not resolve its tag." + buildRowsNote
	}
	return "The same Dockerfile for linux/amd64, linux/arm64 and one Windows variant per LTSC release (ltsc2022, ltsc2025) " +
		"on nanoserver-like bases. imgctl: `imgctl build --builder ADDR --progress quiet --provenance=false --no-verify " +
		"--platform linux/amd64,linux/arm64,windows/amd64 --windows ltsc2022,ltsc2025 " +
		"--windows-base ltsc2022=HOST/nanoserver:ltsc2022,ltsc2025=HOST/nanoserver:ltsc2025 -t TARGET --build-arg ... " +
		"examples/hello`: three solves (Linux, and one per release), each pushed by digest and read back from the " +
		"daemon's content store, then one PUT of the index. buildctl does the same three solves, " +
		"run concurrently (imgctl solves its variants concurrently too): one with `--opt platform=linux/amd64,linux/arm64`, " +
		"and one per release with `--opt platform=windows/amd64 --opt build-arg:WINDOWS_BASE=HOST/nanoserver:ltsc20xx`, " +
		"each with `--output type=image,name=TARGET,push-by-digest=true,push=true` and `--metadata-file` for the digest. " +
		"**buildctl cannot merge these into one index**: that takes another tool (`imgctl index create`, " +
		"`crane index append`, `regctl index create`), whose requests and time are not in buildctl's row. So the " +
		"buildctl row is its solves only, and the overhead below overstates imgctl's cost for the same result." + buildRowsNote
}

// runBuildCases runs the selected build cases with the selected build
// tools against one registry, one set of seeded bases and one buildkitd,
// and returns their RESULTS.md sections by case name.
func runBuildCases(ctx context.Context, cs []*buildCase, o options, root, binDir, work string, log io.Writer) (*buildReport, error) {
	tools, err := newBuildTools(root, work, !o.skipVerify, o.baseline)
	if err != nil {
		return nil, err
	}
	tools = filter(tools, o.tools, tool.Name)
	if len(tools) == 0 {
		return nil, nil
	}
	for _, t := range tools {
		fmt.Fprintf(log, "installing %s\n", t.Name())
		if err := t.Install(ctx, binDir); err != nil {
			return nil, err
		}
	}
	e, err := startEnv()
	if err != nil {
		return nil, err
	}
	defer e.Close()
	// Always traced: the report lists the requests imgctl makes beyond buildctl's.
	e.bytes.setTracing(true)
	fmt.Fprintf(log, "build: seeding bases\n")
	bases, err := buildtest.SeedBases(e.reg.Host())
	defer func() { _ = buildtest.RemoveLayerCache() }()
	if err != nil {
		return nil, fmt.Errorf("seeding bases: %w", err)
	}
	fmt.Fprintf(log, "build: starting buildkitd\n")
	d, err := buildtest.StartBuildkitd(ctx, buildtest.Options{InsecureRegistries: []string{e.reg.Host()}, StartTimeout: time.Minute})
	if (errors.Is(err, buildtest.ErrNoBuildkitd) || errors.Is(err, buildtest.ErrNoRunc)) && o.cases == "" {
		// Not asked for by name: keep the previous build sections.
		fmt.Fprintf(log, "skipping the build cases (RESULTS.md keeps their previous sections): %v\n", err)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("starting buildkitd: %w", err)
	}
	defer d.Close()
	be := &buildEnv{root: root, addr: d.Addr, bases: bases, daemon: d}

	rep := &buildReport{runs: o.buildRuns, tools: tools, warmup: map[string][]string{}, load: map[string][2]string{}}
	if rep.startup, err = measureStartup(ctx, tools); err != nil {
		return nil, err
	}
	for _, c := range cs {
		c.env = be
		// Warm the cache: one untimed build of the same inputs by each tool.
		for _, t := range tools {
			start := time.Now()
			target := fmt.Sprintf("%s/bench/%s/warmup-%s:merged", e.reg.Host(), c.Name(), slug(t.Name()))
			if err := t.Run(ctx, c.Op(target)); err != nil {
				return nil, fmt.Errorf("%s: warm-up build with %s: %w (buildkitd log: %s)", c.Name(), t.Name(), err, d.LogTail(10))
			}
			took := time.Since(start).Round(time.Millisecond)
			rep.warmup[c.Name()] = append(rep.warmup[c.Name()], fmt.Sprintf("%s %v", t.Name(), took))
			fmt.Fprintf(log, "  %s warm-up %-14s %v\n", c.Name(), t.Name(), took)
		}
		before := loadAvg()
		cr := runCase(ctx, e, c, tools, o.buildRuns, log)
		rep.load[c.Name()] = [2]string{before, loadAvg()}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rep.cases = append(rep.cases, cr)
		if o.trace != "" {
			if err := writeTraces(filepath.Join(o.trace, c.Name()), cr); err != nil {
				return nil, err
			}
		}
	}
	return rep, nil
}

// loadAvg is the 1-minute load average, or "?" where /proc is missing.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}
