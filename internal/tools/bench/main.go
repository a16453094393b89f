// Command bench measures what imgctl and its peers (crane, regctl) cost a
// registry for the same job: requests by method, bytes through the client
// and wall time, each the median of several runs against one in-process
// registry, and checks what each tool's result kept. It writes
// internal/tools/bench/RESULTS.md. Run it with `make bench` or `go run
// ./internal/tools/bench` from the module root.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}

type options struct {
	runs       int
	out        string
	cases      string
	tools      string
	skipVerify bool
	trace      string
	buildRuns  int
	token      bool
	dist       bool
	baseline   string
	scSize     byteSize
	scEntries  int
	// bakeTargets and bakeJobs are the bake case's targets and --jobs.
	bakeTargets int
	bakeJobs    int
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o options
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.runs, "runs", 5, "measured runs per tool and case; the report shows medians")
	fs.StringVar(&o.out, "out", "", "report file (default "+benchDir+"/RESULTS.md in the module root)")
	fs.StringVar(&o.cases, "cases", "", "comma-separated case names to run (default all but "+servercoreCase+", "+bakeCase+", "+fleet1000Case+" and "+sbomCase+", which run only when named)")
	fs.StringVar(&o.tools, "tools", "", "comma-separated tool names to run (default all)")
	fs.BoolVar(&o.skipVerify, "skip-verify-row", false, "do not measure imgctl with its post-push verification on")
	fs.StringVar(&o.trace, "trace", "", "write every run's requests to DIR/<case>/<tool>-runN.log")
	fs.BoolVar(&o.token, "token", true, "also run "+strings.Join(tokenCases, ", ")+" on a registry with token auth, counting handshakes")
	fs.BoolVar(&o.dist, "dist", true, "also run "+caseNames(distCases())+" on the CNCF distribution registry (bin/registry), with -token also under token auth")
	fs.IntVar(&o.buildRuns, "build-runs", 0, "measured runs per tool of the build cases build-linux and build-windows (default -runs)")
	fs.StringVar(&o.baseline, "baseline", "", "also measure imgctl built from this git revision (row imgctl@REV): the figures before a change, in the same run")
	o.scSize = scDefaultSize
	fs.Var(&o.scSize, "servercore-size", "content bytes of "+servercoreCase+"'s base (random, so at least as many compressed), e.g. 64MiB or 2GiB")
	fs.IntVar(&o.scEntries, "servercore-entries", scDefaultEntries, "tar entries of "+servercoreCase+"'s base over its layers")
	fs.IntVar(&o.bakeTargets, "bake-targets", bakeDefaultTargets, "targets in the bake file of the "+bakeCase+" case (each built for linux/amd64 and "+bakeRelease+")")
	fs.IntVar(&o.bakeJobs, "bake-jobs", bakeDefaultJobs, "imgctl bake --jobs in the "+bakeCase+" case")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.runs < 1 || o.buildRuns < 0 {
		return errors.New("-runs must be at least 1")
	}
	if o.bakeTargets < 1 || o.bakeJobs < 1 {
		return errors.New("-bake-targets and -bake-jobs must be at least 1")
	}
	if o.buildRuns == 0 {
		o.buildRuns = o.runs
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	if o.out == "" {
		o.out = filepath.Join(root, filepath.FromSlash(benchDir), "RESULTS.md")
	}
	binDir := filepath.Join(root, filepath.FromSlash(benchDir), ".bin")
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "imgctl-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	tools, err := newTools(root, work, !o.skipVerify, o.baseline)
	if err != nil {
		return err
	}
	tools = filter(tools, o.tools, tool.Name)
	cs := filter(cases(), o.cases, benchCase.Name)
	var dcs []distCase
	if o.dist {
		dcs = filter(distCases(), o.cases, distCase.Name)
	}
	// The build cases have their own tools, registry and buildkitd (build.go).
	var brep *buildReport
	if bcs := filter(buildCases(), o.cases, buildCaseName); len(bcs) > 0 {
		if brep, err = runBuildCases(ctx, bcs, o, root, binDir, work, stderr); err != nil {
			return err
		}
	}
	// The cases with a registry (and builder) of their own, each with its section.
	for _, r := range sectionRunners() {
		secs, gs, err := r(ctx, o, root, binDir, work, stderr)
		if err != nil {
			return err
		}
		if len(secs) == 0 {
			continue
		}
		if brep == nil {
			brep = &buildReport{}
		}
		for n, sec := range secs {
			brep.addExtra(n, sec, nil)
		}
		brep.extraGoals = append(brep.extraGoals, gs...)
	}
	if len(tools) == 0 || len(cs) == 0 && len(dcs) == 0 {
		if brep == nil {
			return errors.New("no tools or no cases selected")
		}
		if err := writeResults(ctx, o.out, "", brep); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%swrote %s\n", brep.goalText(), o.out)
		return nil
	}
	for _, t := range tools {
		fmt.Fprintf(stderr, "installing %s\n", t.Name())
		if err := t.Install(ctx, binDir); err != nil {
			return err
		}
	}

	md, rep := "", (*report)(nil)
	if len(cs) > 0 {
		if md, rep, err = runRegtestCases(ctx, cs, tools, o, stderr); err != nil {
			return err
		}
	} else {
		md = distHeader(tools, o.runs)
	}
	var drep *distResults
	if len(dcs) > 0 {
		if drep, err = runDistCases(ctx, dcs, tools, o.runs, o.token, stderr); err != nil {
			return err
		}
		md += drep.markdown()
	}
	if err := writeResults(ctx, o.out, md, brep); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s%s%s\nwrote %s\n", rep.goalText(), drep.goalText(), brep.goalText(), o.out)
	return nil
}

// sectionRunner measures cases that start their own registry (and
// builder), when -cases selects them, and returns their RESULTS.md
// sections by case name and their goals; none when none is selected.
type sectionRunner func(ctx context.Context, o options, root, binDir, work string, log io.Writer) (map[string]string, []goal, error)

// oneSection is a sectionRunner for one case name, run when selected.
func oneSection(name string, selected func(cases string) bool,
	run func(ctx context.Context, o options, root, binDir, work string, log io.Writer) (string, []goal, error)) sectionRunner {
	return func(ctx context.Context, o options, root, binDir, work string, log io.Writer) (map[string]string, []goal, error) {
		if !selected(o.cases) {
			return nil, nil, nil
		}
		sec, gs, err := run(ctx, o, root, binDir, work, log)
		if err != nil || sec == "" {
			return nil, nil, err
		}
		return map[string]string{name: sec}, gs, nil
	}
}

// sectionRunners are the cases with their own registry, in run order:
// the cold Windows build (coldwin.go), the opt-in servercore-scale build
// (servercore.go) and bake (bake_case.go), the fleet cases
// (fleet_case.go), the patch-level report's requests (patchlevel_case.go)
// and the opt-in Windows SBOM build (sbom_case.go).
func sectionRunners() []sectionRunner {
	coldSelected := func(cases string) bool {
		return len(filter([]string{coldCase}, cases, func(s string) string { return s })) > 0
	}
	cold := func(ctx context.Context, o options, root, binDir, work string, log io.Writer) (string, []goal, error) {
		sec, err := runColdWindows(ctx, o, root, binDir, work, log)
		return sec, nil, err
	}
	return []sectionRunner{
		oneSection(coldCase, coldSelected, cold),
		oneSection(servercoreCase, servercoreSelected, runServercore),
		oneSection(bakeCase, bakeSelected, runBake),
		runFleet,
		oneSection(patchlevelCase, patchlevelSelected, runPatchlevel),
		oneSection(sbomCase, sbomSelected, runSBOM),
	}
}

// runRegtestCases runs cs on an in-process regtest registry, and the token
// cases on a second one, and returns their report section.
func runRegtestCases(ctx context.Context, cs []benchCase, tools []tool, o options, stderr io.Writer) (string, *report, error) {
	e, err := startEnv()
	if err != nil {
		return "", nil, err
	}
	defer e.Close()
	e.bytes.setTracing(o.trace != "")
	for _, t := range tools {
		if err := t.Configure(ctx, e.reg.Host()); err != nil {
			return "", nil, fmt.Errorf("configuring %s: %w", t.Name(), err)
		}
	}

	rep := &report{runs: o.runs, tools: tools}
	for _, c := range cs {
		fmt.Fprintf(stderr, "case %s: pushing sources\n", c.Name())
		if err := c.Setup(ctx, e); err != nil {
			return "", nil, fmt.Errorf("setting up %s: %w", c.Name(), err)
		}
		cr := runCase(ctx, e, c, tools, o.runs, stderr)
		if err := ctx.Err(); err != nil {
			return "", nil, err
		}
		rep.cases = append(rep.cases, cr)
		if o.trace != "" {
			if err := writeTraces(filepath.Join(o.trace, c.Name()), cr); err != nil {
				return "", nil, err
			}
		}
	}
	md, err := rep.markdown(ctx)
	if err != nil {
		return "", nil, err
	}
	if o.token && len(filter(cs, strings.Join(tokenCases, ","), benchCase.Name)) > 0 {
		trs, err := runTokenCases(ctx, tools, o.runs, stderr)
		if err != nil {
			return "", nil, err
		}
		md += tokenMarkdown(trs)
	}
	return md, rep, nil
}

// newTools returns the tools in report order, each with a private home
// under work. imgctl is measured as the peers run (no verification after
// the push) and, for information, with its default verification on.
func newTools(root, work string, withVerify bool, baseline string) ([]tool, error) {
	var tools []tool
	home := func(n string) (cmdTool, error) { return newCmdTool(filepath.Join(work, n)) }
	h, err := home("imgctl")
	if err != nil {
		return nil, err
	}
	tools = append(tools, &imgctl{cmdTool: h, root: root})
	if withVerify {
		if h, err = home("imgctl-verify"); err != nil {
			return nil, err
		}
		tools = append(tools, &imgctl{cmdTool: h, root: root, verify: true})
	}
	if baseline != "" {
		if h, err = home("imgctl-" + slug(baseline)); err != nil {
			return nil, err
		}
		tools = append(tools, &imgctl{cmdTool: h, root: root, baseline: baseline})
	}
	if h, err = home("crane"); err != nil {
		return nil, err
	}
	tools = append(tools, &crane{h})
	if h, err = home("regctl"); err != nil {
		return nil, err
	}
	return append(tools, &regctl{h}), nil
}

// toolResult is what one tool did in one case over all runs.
type toolResult struct {
	tool     tool
	samples  []sample
	findings []finding // from the first checked run
	varies   bool      // a later run's findings differed
	checkErr error
}

type caseResult struct {
	c     benchCase
	tools []*toolResult
}

// runCase runs every tool o.runs times, each run into a fresh target
// repository, rotating the order of tools from run to run.
func runCase(ctx context.Context, e *env, c benchCase, tools []tool, runs int, log io.Writer) caseResult {
	cr := caseResult{c: c}
	for _, t := range tools {
		cr.tools = append(cr.tools, &toolResult{tool: t})
	}
	for r := range runs {
		for i := range cr.tools {
			tr := cr.tools[(i+r)%len(cr.tools)]
			if ctx.Err() != nil {
				return cr
			}
			target := runTarget(e.reg.Host(), "bench", c, tr.tool.Name(), r+1)
			o := c.Op(target)
			s := sample{Err: prepareRun(ctx, e, c, target)}
			if s.Err == nil {
				s = e.measure(func() error { return tr.tool.Run(ctx, o) })
			}
			tr.samples = append(tr.samples, s)
			status := fmt.Sprintf("%d requests, layer %d B, %v", s.Stats.Total(), s.Bytes.Layer, s.Wall.Round(1e6))
			if s.Err != nil {
				status = "FAILED: " + s.Err.Error()
			} else if fs, err := c.Check(ctx, target); err != nil {
				tr.checkErr = err
			} else if tr.findings == nil {
				tr.findings = fs
			} else if !slices.Equal(tr.findings, fs) {
				tr.varies = true
			}
			fmt.Fprintf(log, "  %s run %d/%d %-14s %s\n", c.Name(), r+1, runs, tr.tool.Name(), status)
		}
	}
	return cr
}

// seededCase is a case whose runs start from a copy of its source in the
// run's fresh target repository, made before the run is measured.
type seededCase interface {
	seed(ctx context.Context, e *env, target string) error
}

// runTarget is where a run of tool writes its result: a fresh repository
// HOST/PREFIX/<case>/<tool>-runN, tag merged.
func runTarget(host, prefix string, c benchCase, tool string, run int) string {
	return fmt.Sprintf("%s/%s/%s/%s-run%d:merged", host, prefix, c.Name(), slug(tool), run)
}

// prepareRun seeds target for a seeded case; other cases need nothing.
func prepareRun(ctx context.Context, e *env, c benchCase, target string) error {
	if d, ok := c.(distCase); ok {
		c = d.benchCase
	}
	if sc, ok := c.(seededCase); ok {
		return sc.seed(ctx, e, target)
	}
	return nil
}

// writeTraces writes the request log of every run of every tool into dir.
func writeTraces(dir string, cr caseResult) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, tr := range cr.tools {
		for i, s := range tr.samples {
			body := "# method status bytes-in bytes-out uri\n" + strings.Join(s.Trace, "\n") + "\n"
			f := filepath.Join(dir, fmt.Sprintf("%s-run%d.log", slug(tr.tool.Name()), i+1))
			if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

func slug(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, strings.ToLower(s))
}

// filter keeps the items whose name is listed in the comma-separated sel;
// an empty sel keeps all.
func filter[T any](items []T, sel string, name func(T) string) []T {
	if sel == "" {
		return items
	}
	want := strings.Split(sel, ",")
	return slices.DeleteFunc(items, func(x T) bool { return !slices.Contains(want, name(x)) })
}

// benchDir is where this command lives, relative to the module root (slash
// separated): its report and the tools it builds go there.
const benchDir = "internal/tools/bench"

// moduleRoot finds the imgctl module root from the working directory up.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(b), "module github.com/imgctl/imgctl\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run bench inside the imgctl module (go run ./" + benchDir + ")")
		}
		dir = parent
	}
}
