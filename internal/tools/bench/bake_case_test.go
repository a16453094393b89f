package main

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/imgctl/imgctl/bake"
	"github.com/imgctl/imgctl/internal/testing/regtest"
)

func TestBakeSelected(t *testing.T) {
	for cases, want := range map[string]bool{"": false, "bake": true, "merge-3,bake": true, "bakes": false, servercoreCase: false} {
		if got := bakeSelected(cases); got != want {
			t.Errorf("bakeSelected(%q) = %t, want %t", cases, got, want)
		}
	}
}

func testBakeSpec(t *testing.T, targets int) bakeSpec {
	dir := t.TempDir()
	ctxDir := filepath.Join(dir, "context")
	if err := writeBakeContext(ctxDir, targets); err != nil {
		t.Fatal(err)
	}
	return bakeSpec{host: "127.0.0.1:5000", ctxDir: ctxDir, linuxBase: "127.0.0.1:5000/bases/distroless/static:nonroot",
		windowsBase: "127.0.0.1:5000/bases/nanoserver:{ltsc}", addrA: "unix:///a/buildkitd.sock", addrB: "unix:///b/buildkitd.sock",
		targets: targets, jobs: 2}
}

// flagValues are the values of flag in a command line, in order.
func flagValues(args []string, flag string) []string {
	var out []string
	for i := 0; i+1 < len(args); i++ {
		if args[i] == flag {
			out = append(out, args[i+1])
		}
	}
	return out
}

// TestBakeFileMatchesBuilds reads the bake file with imgctl's bake
// package, as imgctl bake does, and checks that the builds of row 1 get
// what bake derives for each target: the tag, context, platforms,
// release, Windows base and args.
func TestBakeFileMatchesBuilds(t *testing.T) {
	const n = 3
	s := testBakeSpec(t, n)
	tags := bakeTags(s.host, bakeOneBuilder, 2, n)
	file := filepath.Join(t.TempDir(), "docker-bake.hcl")
	if err := os.WriteFile(file, []byte(bakeHCL(s, tags)), 0o644); err != nil {
		t.Fatal(err)
	}
	def, err := bake.Read(context.Background(), bake.Options{Files: []string{file}, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	targets, err := def.Plan(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(targets) != n {
		t.Fatalf("%d targets, want %d", len(targets), n)
	}
	for i, tg := range targets {
		if tg.Name != bakeTargetName(i) || len(tg.Tags) != 1 || tg.Tags[0].String() != tags[i] || tg.ContextDir != s.ctxDir {
			t.Errorf("target %d: %s %v %s", i, tg.Name, tg.Tags, tg.ContextDir)
		}
		args := bakeBuildArgs(s, i, tags[i])
		if got := flagValues(args, "-t"); !slices.Equal(got, []string{tags[i]}) || args[len(args)-1] != tg.ContextDir {
			t.Errorf("build %d: -t %v, context %s", i, got, args[len(args)-1])
		}
		var plats []string
		for _, p := range tg.Variants.Platforms {
			plats = append(plats, p.OS+"/"+p.Architecture)
		}
		if got := flagValues(args, "--platform"); len(got) != 1 || got[0] != strings.Join(plats, ",") {
			t.Errorf("build %d: --platform %v, bake %v", i, got, plats)
		}
		if got := flagValues(args, "--windows"); !slices.Equal(got, []string{strings.Join(tg.Releases(), ",")}) {
			t.Errorf("build %d: --windows %v, bake %v", i, got, tg.Releases())
		}
		base := strings.ReplaceAll(tg.Variants.WindowsBaseTemplate, "{ltsc}", bakeRelease)
		if got := flagValues(args, "--windows-base"); !slices.Equal(got, []string{bakeRelease + "=" + base}) || base != "127.0.0.1:5000/bases/nanoserver:ltsc2025" {
			t.Errorf("build %d: --windows-base %v, bake %s", i, got, base)
		}
		buildArgs := map[string]string{}
		for _, a := range flagValues(args, "--build-arg") {
			k, v, _ := strings.Cut(a, "=")
			buildArgs[k] = v
		}
		if !maps.Equal(buildArgs, tg.Variants.BuildArgs) || buildArgs["NAME"] != bakeTargetName(i) {
			t.Errorf("build %d: --build-arg %v, bake %v", i, buildArgs, tg.Variants.BuildArgs)
		}
		if _, err := os.Stat(filepath.Join(s.ctxDir, bakeTargetName(i)+".txt")); err != nil {
			t.Error(err)
		}
	}
}

func TestBakeArgs(t *testing.T) {
	s := testBakeSpec(t, 2)
	one, two, pool := bakeArgs(s, bakeOneBuilder, "f.hcl"), bakeArgs(s, bakeTwoBuilders, "f.hcl"), bakeArgs(s, bakePool, "f.hcl")
	fill := bakeFillArgs(s, "f.hcl")
	if got := flagValues(one, "--builder"); !slices.Equal(got, []string{s.addrA}) || len(flagValues(one, "--node")) != 0 {
		t.Errorf("1 builder: %v", one)
	}
	if got := flagValues(two, "--node"); !slices.Equal(got, []string{"linux/amd64=" + s.addrA, "windows=" + s.addrB}) || len(flagValues(two, "--builder")) != 0 {
		t.Errorf("2 builders: %v", two)
	}
	// The pool: both platforms on A, then both on B, so the first target goes wholly to A.
	if got := flagValues(pool, "--node"); !slices.Equal(got, []string{"linux=" + s.addrA, "windows=" + s.addrA, "linux=" + s.addrB, "windows=" + s.addrB}) ||
		len(flagValues(pool, "--builder")) != 0 {
		t.Errorf("pool: %v", pool)
	}
	if got := flagValues(fill, "--builder"); !slices.Equal(got, []string{s.addrB}) || len(flagValues(fill, "--node")) != 0 {
		t.Errorf("fill of B: %v", fill)
	}
	for _, args := range [][]string{one, two, pool, fill} {
		if !slices.Equal(flagValues(args, "--jobs"), []string{"2"}) || !slices.Contains(args, "--no-verify") || !slices.Equal(flagValues(args, "-f"), []string{"f.hcl"}) {
			t.Errorf("%v", args)
		}
	}
	if b := bakeBuildArgs(s, 0, "x"); !slices.Equal(flagValues(b, "--builder"), []string{s.addrA}) || !slices.Contains(b, "--no-verify") {
		t.Errorf("build: %v", b)
	}
}

// TestBakeTags: every run of every row, and the fill of builder B before
// the pool row's warm-up, writes tags no other writes, each target to its
// own repository.
func TestBakeTags(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range bakeKinds {
		var runs [][]string
		for run := range 3 {
			runs = append(runs, bakeTags("127.0.0.1:5000", k, run, 4))
		}
		if k == bakePool {
			runs = append(runs, bakeLabelTags("127.0.0.1:5000", k, bakeFillLabel, 4))
		}
		for _, tags := range runs {
			for _, tag := range tags {
				ref, err := name.NewTag(tag, name.Insecure)
				if err != nil {
					t.Fatal(err)
				}
				if seen[ref.Context().String()] {
					t.Errorf("repository %s written twice", ref.Context())
				}
				seen[ref.Context().String()] = true
			}
		}
	}
	if got := bakeTags("H", bakeTwoBuilders, 0, 1)[0]; got != "H/bench/bake/bake-2-builders/warmup/t1:v1" {
		t.Errorf("warm-up tag %s", got)
	}
	if got := bakeTags("H", bakePool, 2, 2)[1]; got != "H/bench/bake/bake-pool/run2/t2:v1" {
		t.Errorf("pool tag %s", got)
	}
	if got := bakeLabelTags("H", bakePool, bakeFillLabel, 1)[0]; got != "H/bench/bake/bake-pool/fill-b/t1:v1" {
		t.Errorf("fill tag %s", got)
	}
	if len(seen) != 3*4*len(bakeKinds)+4 {
		t.Errorf("%d repositories", len(seen))
	}
}

func TestSolveText(t *testing.T) {
	if got := solveText(nil); got != "none" {
		t.Errorf("%q", got)
	}
	if got := solveText(map[string]int{"windows(10.0.26100)/amd64": 4, "linux/amd64": 4}); got != "4× `linux/amd64`, 4× `windows(10.0.26100)/amd64`" {
		t.Errorf("%q", got)
	}
}

// TestBakeReport renders a made-up run: the goals' verdicts, the table
// and where writeResults puts the section.
func TestBakeReport(t *testing.T) {
	rep := &bakeReport{runs: 3, targets: 4, jobs: 2, spec: testBakeSpec(t, 4), baseSize: 16_800_000, load: [2]string{"1.5", "2.0"}}
	walls := map[bakeRowKind]time.Duration{bakeBuilds: 10 * time.Second, bakeOneBuilder: 10400 * time.Millisecond,
		bakeTwoBuilders: 7 * time.Second, bakePool: 6 * time.Second}
	const win = "windows(10.0.26100.6584)/amd64"
	for _, k := range bakeKinds {
		r := &bakeRow{kind: k, name: bakeRowName(k, 4, 2), tool: &imgctl{version: "checkout abc"}, warmup: time.Minute}
		for i := range 3 {
			run := bakeRun{sample: sample{Wall: walls[k] + time.Duration(i)*time.Millisecond, Stats: regtest.Stats{Get: 10, Head: 5 + i}}}
			switch k {
			case bakeTwoBuilders:
				run.solves = [2]map[string]int{{"linux/amd64": 4}, {win: 4}}
			case bakePool:
				run.solves = [2]map[string]int{{"linux/amd64": 2, win: 2}, {"linux/amd64": 2, win: 2}}
			default:
				run.solves = [2]map[string]int{{"linux/amd64": 4, win: 4}}
			}
			r.runs = append(r.runs, run)
		}
		rep.rows = append(rep.rows, r)
	}
	gs := rep.goals()
	if len(gs) != 3 || !gs[0].ok || !gs[1].ok || !gs[2].ok {
		t.Fatalf("goals: %+v", gs)
	}
	if !strings.Contains(gs[0].detail, "1.04×") || !strings.Contains(gs[1].detail, "0.70×") || !strings.Contains(gs[1].detail, "1 builder: 0.67×") {
		t.Errorf("details: %q; %q", gs[0].detail, gs[1].detail)
	}
	if want := "bake: on a pool of 2 builders, a bake of 4 targets faster than 4 imgctl builds one after the other"; gs[2].title != want {
		t.Errorf("pool goal %q", gs[2].title)
	}
	if !strings.Contains(gs[2].detail, "`imgctl bake --jobs 2, a pool of 2 builders` 6001 ms vs `imgctl build ×4, one after the other` 10001 ms: **0.60×**") ||
		!strings.Contains(gs[2].detail, "1 builder: 0.58×") {
		t.Errorf("pool goal detail %q", gs[2].detail)
	}
	// The two-builder row solves nothing of a platform on A or B alike: no
	// pool check applies to it; the pool row with one idle builder fails.
	pool := rep.rows[3]
	saved := pool.runs[1].solves
	pool.runs[1].solves = [2]map[string]int{{"linux/amd64": 4, win: 4}, {}}
	if g := rep.goals(); !g[1].ok || g[2].ok || !strings.Contains(g[2].detail, "in successful timed run 2 builder B solved nothing") {
		t.Errorf("a pool with an idle builder: %+v", g)
	}
	if sec := rep.section(context.Background()); !strings.Contains(sec, "- **`imgctl bake --jobs 2, a pool of 2 builders`: the pool did not spread the targets**: in successful timed run 2 builder B solved nothing.") ||
		!strings.Contains(sec, "- `imgctl bake --jobs 2, a pool of 2 builders`: the builders' solves differed from run to run") {
		t.Errorf("section does not flag the idle builder:\n%s", sec)
	}
	pool.runs[1].solves = saved
	pool.runs[2].Wall = 11 * time.Second
	pool.runs[1].Wall = 11 * time.Second // median 11 s: slower than the builds
	if rep.goals()[2].ok {
		t.Error("a pool slower than the builds passes")
	}
	pool.runs[1].Wall, pool.runs[2].Wall = 6001*time.Millisecond, 6002*time.Millisecond
	rep.rows[1].runs[0].Wall = 11 * time.Second
	rep.rows[1].runs[2].Wall = 11 * time.Second // median 11 s: 1.10×
	if rep.goals()[0].ok {
		t.Error("a bake 10% slower passes")
	}
	rep.rows[2].runs[1].Err = errors.New("boom")
	if g := rep.goals(); g[1].ok || !g[2].ok {
		t.Errorf("a failed run of the 2-builder row: %+v", g)
	}
	rep.rows[2].runs[1].Err = nil
	rep.rows[3].runs[1].Err = errors.New("boom")
	if g := rep.goals(); !g[1].ok || g[2].ok {
		t.Errorf("a failed run of the pool row: %+v", g)
	}
	rep.rows[3].runs[1].Err = nil
	rep.rows[0].runs[0].checkErr = errors.New("127.0.0.1:5000/bench/bake/builds/run1/t1:v1: platforms [linux/amd64]")
	sec := rep.section(context.Background())
	for _, want := range []string{"<!-- build-case:bake:begin -->", "<!-- build-case:bake:end -->", "## bake: A bake of 4 targets",
		"| imgctl bake --jobs 2, 2 builders | 7001 ms | 7000 ms–7002 ms | **16** |", "4× `linux/amd64` | 4× `windows(10.0.26100.6584)/amd64` |",
		"`imgctl bake -f docker-bake.hcl --progress quiet --no-verify --jobs 2 --node linux/amd64=unix:///A/buildkitd.sock --node windows=unix:///B/buildkitd.sock`",
		"| imgctl bake --jobs 2, a pool of 2 builders | 6001 ms | 6000 ms–6002 ms | **16** |",
		"| 2× `linux/amd64`, 2× `windows(10.0.26100.6584)/amd64` | 2× `linux/amd64`, 2× `windows(10.0.26100.6584)/amd64` |",
		"`imgctl bake -f docker-bake.hcl --progress quiet --no-verify --jobs 2 --node linux=unix:///A/buildkitd.sock --node windows=unix:///A/buildkitd.sock " +
			"--node linux=unix:///B/buildkitd.sock --node windows=unix:///B/buildkitd.sock`. One process, 2 targets at once, over a pool",
		"- `imgctl bake --jobs 2, a pool of 2 builders`: the targets' solves split between the builders as A: 2× `linux/amd64`, " +
			"2× `windows(10.0.26100.6584)/amd64`; B: 2× `linux/amd64`, 2× `windows(10.0.26100.6584)/amd64` (the first timed run); both builders solved in every timed run.",
		"(`imgctl bake -f docker-bake.hcl --progress quiet --no-verify --jobs 2 --builder unix:///B/buildkitd.sock`)", "`.../bake-pool/fill-b/tI:v1`",
		"**FAIL** bake: on a pool of 2 builders, a bake of 4 targets faster", "on 1 builder, 2 builders and a pool of 2",
		"-t HOST/bench/bake/builds/runR/tI:v1 --build-arg LINUX_BASE=HOST/bases/distroless/static:nonroot --build-arg NAME=tI CONTEXT`", "Builder state: warm", "**FAIL** bake: a bake of 4 targets no slower", "Results read back wrong",
		"HOST/bench/bake/builds/run1/t1:v1", `WINDOWS_BASE = "HOST/bases/nanoserver:{ltsc}"`, "16,800,000", "load average before and after the timed runs: 1.5 and 2.0"} {
		if !strings.Contains(sec, want) {
			t.Errorf("section lacks %q:\n%s", want, sec)
		}
	}
	if strings.Contains(sec, "127.0.0.1") {
		t.Errorf("section names the registry's port:\n%s", sec)
	}
	// writeResults puts the section after the servercore case's, and keeps it on a later run of another case.
	path := filepath.Join(t.TempDir(), "RESULTS.md")
	br := &buildReport{}
	br.addExtra(bakeCase, sec, rep.goals())
	br.addExtra(servercoreCase, "<!-- build-case:"+servercoreCase+":begin -->\nsc\n<!-- build-case:"+servercoreCase+":end -->\n", nil)
	if err := writeResults(context.Background(), path, "# index\n", br); err != nil {
		t.Fatal(err)
	}
	br = &buildReport{}
	br.addExtra(coldCase, "<!-- build-case:"+coldCase+":begin -->\ncold\n<!-- build-case:"+coldCase+":end -->\n", nil)
	if err := writeResults(context.Background(), path, "", br); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	got := string(b)
	if i, j, k := strings.Index(got, "\ncold\n"), strings.Index(got, "\nsc\n"), strings.Index(got, "## "+bakeCase+":"); i < 0 || j < i || k < j {
		t.Errorf("RESULTS.md:\n%s", got)
	}
}
