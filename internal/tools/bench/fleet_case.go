package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/imgctl/imgctl/fleet"
	"github.com/imgctl/imgctl/internal/testing/fleettest"
)

// The fleet cases (issue 39): imgctl patch over a fleet of release images
// against the loop of single-image verbs a user writes today. fleetCase
// runs by default; fleet1000Case only when -cases names it.
const (
	fleetCase     = "fleet"
	fleet1000Case = "fleet-1000"
	// fleetImages and fleet1000Images are the fleets' sizes.
	fleetImages     = 100
	fleet1000Images = 1000
	// fleetRSSGoalMB is fleet-1000's bound on imgctl's peak RSS.
	fleetRSSGoalMB = 200
)

// fleetSelected reports whether the comma-separated -cases value selects
// the fleet case (the default selection does) and the opt-in fleet-1000.
func fleetSelected(cases string) (fleet, big bool) {
	names := strings.Split(cases, ",")
	return cases == "" || slices.Contains(names, fleetCase), slices.Contains(names, fleet1000Case)
}

// fleetRow is one measured way of patching the fleet.
type fleetRow struct {
	name     string
	images   int
	wall     time.Duration
	requests int
	// baseTags are the GETs and HEADs of the three base tags.
	baseTags int
	// baseConfigs are the GETs of base config blobs, in any repository.
	baseConfigs int
	// outcomes counts the images by what happened to them.
	outcomes map[string]int
	rssKiB   int64
	err      error
}

func (r fleetRow) perImage() float64 { return float64(r.requests) / float64(max(r.images, 1)) }

// fleetRun is one fleet on a fresh distribution registry: the published
// cases, the list file, the policy and the signing key pair.
type fleetRun struct {
	d          *distEnv
	tool       *imgctl
	cases      []fleettest.Case
	list, pol  string
	key, pub   string
	baseConfig map[string]bool
}

// newFleetRun starts a registry, publishes a fleet of n images on it and
// writes the tool's list, policy and keys under dir.
func newFleetRun(ctx context.Context, t *imgctl, n int, dir string, log io.Writer) (*fleetRun, error) {
	d, err := startPreparedDistEnv(ctx, false, []tool{t})
	if err != nil {
		return nil, err
	}
	fr := &fleetRun{d: d, tool: t, baseConfig: map[string]bool{}}
	start := time.Now()
	if fr.cases, err = fleettest.Publish(d.dist, fleettest.Options{Images: n}); err != nil {
		d.Close()
		return nil, fmt.Errorf("publishing the fleet: %w", err)
	}
	fmt.Fprintf(log, "  published %d images in %v\n", n, time.Since(start).Round(time.Second))
	cfgs, err := fleettest.BaseConfigs()
	if err != nil {
		d.Close()
		return nil, err
	}
	for _, c := range cfgs {
		fr.baseConfig[c] = true
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		d.Close()
		return nil, err
	}
	fr.list, fr.pol = filepath.Join(dir, "releases.txt"), filepath.Join(dir, "policy.yaml")
	fr.key, fr.pub = filepath.Join(dir, "release.key"), filepath.Join(dir, "release.pub")
	err = errors.Join(
		os.WriteFile(fr.list, []byte(fleettest.List(d.reg.Host(), fr.cases)), 0o644),
		os.WriteFile(fr.pol, []byte(fleettest.Policy(d.reg.Host())), 0o644))
	if err == nil {
		_, err = t.exec(ctx, "keygen", "--output-key-prefix", filepath.Join(dir, "release"))
	}
	if err != nil {
		d.Close()
		return nil, err
	}
	return fr, nil
}

// measure runs f with the request log cleared and fills the row's counts.
func (fr *fleetRun) measure(name string, f func() error) fleetRow {
	fr.d.dist.ResetRequests()
	start := time.Now()
	err := f()
	r := fleetRow{name: name, images: len(fr.cases), wall: time.Since(start), err: err}
	for _, q := range fr.d.dist.Requests() {
		r.requests++
		for _, p := range fleettest.BaseTags {
			if strings.HasSuffix(q.Path, "/v2/"+p) && (q.Method == http.MethodGet || q.Method == http.MethodHead) {
				r.baseTags++
			}
		}
		if _, d, ok := strings.Cut(q.Path, "/blobs/"); ok && q.Method == http.MethodGet && fr.baseConfig[d] {
			r.baseConfigs++
		}
	}
	return r
}

// code runs imgctl and returns its exit code; a failure to start is an error.
func (fr *fleetRun) code(ctx context.Context, args ...string) (int, error) {
	_, err := fr.tool.exec(ctx, args...)
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		return ee.ExitCode(), nil
	}
	return 0, err
}

// loop is what a user's shell loop does today, image by image: bases; for
// a stale image rebase to a staging tag, verify it, sign it and promote it.
func (fr *fleetRun) loop(ctx context.Context) fleetRow {
	outcomes := map[string]int{}
	r := fr.measure("shell loop of bases, rebase, verify, sign, promote", func() error {
		host := fr.d.reg.Host()
		for _, c := range fr.cases {
			ref := host + "/" + c.Repo + ":" + c.Tag
			stage := host + "/" + c.Repo + ":stage"
			steps := [][]string{
				{"bases", ref},
				{"rebase", ref, "-t", stage, "--no-verify"},
				{"verify", stage, "--policy", fr.pol},
				{"sign", stage, "--key", fr.key},
				{"promote", stage, host + "/" + c.Repo + ":" + c.NewTag, "--policy", fr.pol, "--key", fr.pub},
			}
			for i, s := range steps {
				code, err := fr.code(ctx, s...)
				if err != nil {
					return err
				}
				if i == 0 && code == 0 {
					outcomes[string(fleet.Current)]++
					break
				}
				if i == 0 && code != 1 { // bases: 0 current, 1 stale, else an error
					return fmt.Errorf("bases %s: exit %d", ref, code)
				}
				if i > 0 && code != 0 {
					return fmt.Errorf("%s %s: exit %d", s[0], ref, code)
				}
				if i == len(steps)-1 {
					outcomes[string(fleet.Promoted)]++
				}
			}
		}
		return nil
	})
	r.outcomes = outcomes
	return r
}

// patch runs imgctl patch over the list with --jobs.
func (fr *fleetRun) patch(ctx context.Context, jobs int) fleetRow {
	fr.tool.rss = &peakRSS{}
	defer func() { fr.tool.rss = nil }()
	var out string
	r := fr.measure(fmt.Sprintf("imgctl patch --jobs %d", jobs), func() (err error) {
		out, err = fr.tool.exec(ctx, "patch", "-f", fr.list, "--key", fr.key, "--policy", fr.pol, "--jobs", fmt.Sprint(jobs), "-o", "json")
		return err
	})
	r.rssKiB = fr.tool.rss.take()
	if r.err == nil {
		r.outcomes, r.err = patchOutcomes(out)
	}
	return r
}

// runFleet measures the selected fleet cases, each row on a fresh
// registry, and returns their sections and goals by case name.
func runFleet(ctx context.Context, o options, root, binDir, work string, log io.Writer) (map[string]string, []goal, error) {
	small, big := fleetSelected(o.cases)
	if !small && !big || len(filter([]string{"imgctl"}, o.tools, func(s string) string { return s })) == 0 {
		return nil, nil, nil
	}
	h, err := newCmdTool(filepath.Join(work, "fleet"))
	if err != nil {
		return nil, nil, err
	}
	h.extraEnv = []string{"COSIGN_PASSWORD=bench"}
	t := &imgctl{cmdTool: h, root: root}
	fmt.Fprintf(log, "installing imgctl for %s\n", fleetCase)
	if err := t.Install(ctx, binDir); err != nil {
		return nil, nil, err
	}
	row := func(n int, name string, f func(*fleetRun) fleetRow) (fleetRow, error) {
		fmt.Fprintf(log, "%s: %s on %d images\n", fleetCase, name, n)
		fr, err := newFleetRun(ctx, t, n, filepath.Join(work, fmt.Sprintf("fleet-%d-%s", n, slug(name))), log)
		if err != nil {
			return fleetRow{}, err
		}
		defer fr.d.Close()
		r := f(fr)
		fmt.Fprintf(log, "  %v, %d requests (%.1f per image), base tags %d, base configs %d, err %v\n",
			r.wall.Round(time.Millisecond), r.requests, r.perImage(), r.baseTags, r.baseConfigs, r.err)
		return r, ctx.Err()
	}
	sections := map[string]string{}
	var goals []goal
	per100 := 0.0
	if small {
		rep := &fleetReport{load: [2]string{loadAvg()}}
		for _, x := range []struct {
			name string
			f    func(*fleetRun) fleetRow
		}{
			{"loop", func(fr *fleetRun) fleetRow { return fr.loop(ctx) }},
			{"patch --jobs 1", func(fr *fleetRun) fleetRow { return fr.patch(ctx, 1) }},
			{"patch --jobs 8", func(fr *fleetRun) fleetRow { return fr.patch(ctx, 8) }},
		} {
			r, err := row(fleetImages, x.name, x.f)
			if err != nil {
				return nil, nil, err
			}
			rep.rows = append(rep.rows, r)
		}
		rep.load[1] = loadAvg()
		sections[fleetCase], goals = rep.section(ctx), rep.goals()
		if r := rep.rows[2]; r.err == nil {
			per100 = r.perImage()
		}
	}
	if big {
		load := loadAvg()
		r, err := row(fleet1000Images, "patch --jobs 8", func(fr *fleetRun) fleetRow { return fr.patch(ctx, 8) })
		if err != nil {
			return nil, nil, err
		}
		rep := &fleet1000Report{row: r, per100: per100, load: [2]string{load, loadAvg()}}
		if prev, ok := fleetPerImage(o.out); ok && per100 == 0 {
			rep.per100 = prev
		}
		sections[fleet1000Case] = rep.section(ctx)
		goals = append(goals, rep.goals()...)
	}
	return sections, goals, nil
}
