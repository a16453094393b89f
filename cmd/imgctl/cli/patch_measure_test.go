package cli

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/imgctl/imgctl/internal/testing/buildtest"
	"github.com/imgctl/imgctl/internal/testing/disttest"
)

// TestDistPatchMeasure (opt-in: IMGCTL_PATCH_MEASURE=1) measures the
// fleet of TestDistPatchFleet three ways, each on a fresh distribution
// registry: a loop of the single-image verbs (bases; for a stale image
// rebase, verify, sign and promote, as a user's script does), and imgctl
// patch with --jobs 1 and --jobs 8. It logs wall time, requests per image
// and the reads of each base tag. It asserts only that patch reads each
// base tag once per run, and that it sends no more requests than the loop.
func TestDistPatchMeasure(t *testing.T) {
	if os.Getenv("IMGCTL_PATCH_MEASURE") == "" {
		t.Skip("set IMGCTL_PATCH_MEASURE=1 to measure")
	}
	relFastRetries(t)
	type row struct {
		name     string
		wall     time.Duration
		requests int
		baseTags int
	}
	var rows []row
	measure := func(name string, f func(reg *disttest.Registry, cases []fleetCase, list, key, pol string)) {
		reg := disttest.New(t, disttest.Options{})
		cases, list := fleetFixture(t, reg)
		key, _ := fleetKeys(t)
		pol := fleetPolicy(t, reg.Host())
		reg.ResetRequests()
		start := time.Now()
		f(reg, cases, list, key, pol)
		r := row{name: name, wall: time.Since(start), requests: len(reg.Requests())}
		for _, p := range []string{"/v2/base/nanoserver/manifests/ltsc2022", "/v2/base/nanoserver/manifests/ltsc2025", "/v2/base/distroless/manifests/latest"} {
			r.baseTags += reg.Count("GET", p) + reg.Count("HEAD", p)
		}
		rows = append(rows, r)
		t.Logf("%-14s %8.1fs  %5d requests  %5.1f per image  base tags read %d times", name, r.wall.Seconds(), r.requests, float64(r.requests)/float64(len(cases)), r.baseTags)
	}
	measure("loop", func(reg *disttest.Registry, cases []fleetCase, _, key, pol string) {
		for _, c := range cases {
			ref := reg.Host() + "/" + c.repo + ":" + c.tag
			if _, _, code := run(t, "bases", ref); code == 0 {
				continue
			}
			stage := reg.Host() + "/" + c.repo + ":stage"
			if _, _, code := run(t, "rebase", ref, "-t", stage, "--no-verify"); code != 0 {
				continue
			}
			if _, _, code := run(t, "verify", stage, "--policy", pol); code != 0 {
				continue
			}
			run(t, "sign", stage, "--key", key)
			run(t, "promote", stage, strings.TrimSuffix(ref, ":"+c.tag)+":"+c.newTag, "--policy", pol, "--key", strings.TrimSuffix(key, ".key")+".pub")
		}
	})
	for _, jobs := range []string{"1", "8"} {
		measure("patch --jobs "+jobs, func(_ *disttest.Registry, _ []fleetCase, list, key, pol string) {
			run(t, "patch", "-f", list, "--key", key, "--policy", pol, "--jobs", jobs)
		})
	}
	for _, r := range rows[1:] {
		if r.baseTags != 3 {
			t.Errorf("%s read the base tags %d times, want each once", r.name, r.baseTags)
		}
		if r.requests > rows[0].requests {
			t.Errorf("%s sent %d requests, the loop %d", r.name, r.requests, rows[0].requests)
		}
	}
}

// TestDistPatchScale (opt-in: IMGCTL_PATCH_SCALE=N images, e.g. 1000)
// runs the imgctl binary's patch --jobs 8 over a fleet of N images on the
// distribution registry and logs wall time, requests per image and the
// process's peak RSS. It fails when the peak RSS is 200 MB or more: the
// report is streamed, and only the images in flight are held.
func TestDistPatchScale(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv("IMGCTL_PATCH_SCALE"))
	if err != nil || n < 20 {
		t.Skip("set IMGCTL_PATCH_SCALE to a number of images (20 or more) to measure")
	}
	relFastRetries(t)
	bin := buildtest.ImgctlBinary(t)
	reg := disttest.New(t, disttest.Options{})
	start := time.Now()
	cases, list := fleetFixtureN(t, reg, n)
	t.Logf("fixture of %d images in %s", len(cases), time.Since(start).Round(time.Second))
	key, _ := fleetKeys(t)
	pol := fleetPolicy(t, reg.Host())
	reg.ResetRequests()
	cmd := exec.Command(bin, "patch", "-f", list, "--key", key, "--policy", pol, "--jobs", "8", "-o", "json")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start = time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != ExitFailed) {
		t.Fatalf("patch: %v\n%s", err, stderr.String())
	}
	rep := decodePatch(t, stdout.String())
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss // KiB on Linux
	requests := len(reg.Requests())
	t.Logf("%d images: %s, %d requests (%.1f per image), peak RSS %.1f MB; summary %+v",
		len(cases), wall.Round(100*time.Millisecond), requests, float64(requests)/float64(len(cases)), float64(rss)/1024, rep.Summary)
	if rep.Summary.Total != len(cases) || rep.Summary.Errors != 0 {
		t.Errorf("summary %+v, want %d images and no errors", rep.Summary, len(cases))
	}
	if rss >= 200*1024 {
		t.Errorf("peak RSS %.1f MB, want under 200 MB", float64(rss)/1024)
	}
}
