package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/imgctl/imgctl/internal/testing/mcrtest"
	"github.com/imgctl/imgctl/rebase"
	"github.com/imgctl/imgctl/registry"
)

// patchlevelCase counts the requests of bases' patch-level report (issue
// 38, "Requests") against its bound and a crane loop doing it by hand.
const patchlevelCase = "bases-patchlevel"

// The case's app: December 2025's revisions of both builds, so that
// January to November 2026 and May's out-of-band revision are newer: 12
// newer revisions of each build.
const (
	plV2022  = "10.0.20348.4100"
	plV2025  = "10.0.26100.3080"
	plAt     = "2026-12-01"
	plNewer  = 12
	plBuilds = 2
	plRepos  = 1
)

// patchlevelSelected reports whether -cases selects the case (the default
// selection does).
func patchlevelSelected(cases string) bool {
	return cases == "" || slices.Contains(strings.Split(cases, ","), patchlevelCase)
}

// plRow is one measured way of learning the patch level.
type plRow struct {
	name, how string
	requests  int
	wall      time.Duration
	err       error
}

// staticKeychain answers every registry with one authenticator.
type staticKeychain struct{ auth authn.Authenticator }

// Resolve returns the keychain's authenticator for any resource.
func (k staticKeychain) Resolve(authn.Resource) (authn.Authenticator, error) { return k.auth, nil }

// runPatchlevel measures the case on a distribution registry and returns
// its section and goals.
func runPatchlevel(ctx context.Context, o options, root, binDir, work string, log io.Writer) (string, []goal, error) {
	h, err := newCmdTool(filepath.Join(work, "patchlevel-imgctl"))
	if err != nil {
		return "", nil, err
	}
	me := &imgctl{cmdTool: h, root: root}
	if h, err = newCmdTool(filepath.Join(work, "patchlevel-crane")); err != nil {
		return "", nil, err
	}
	cr := &crane{h}
	for _, t := range []tool{me, cr} {
		fmt.Fprintf(log, "installing %s for %s\n", t.Name(), patchlevelCase)
		if err := t.Install(ctx, binDir); err != nil {
			return "", nil, err
		}
	}
	d, err := startPreparedDistEnv(ctx, false, []tool{me, cr})
	if err != nil {
		return "", nil, err
	}
	defer d.Close()
	fmt.Fprintf(log, "%s: pushing the MCR-like base repository\n", patchlevelCase)
	b, err := mcrtest.PushBase(d.dist)
	if err != nil {
		return "", nil, err
	}
	app, err := mcrtest.PushApp(d.dist, b, "dec", plV2022, plV2025)
	if err != nil {
		return "", nil, err
	}
	measure := func(name, how string, f func() error) plRow {
		d.dist.ResetRequests()
		start := time.Now()
		err := f()
		r := plRow{name: name, how: how, err: err, wall: time.Since(start), requests: len(d.dist.Requests())}
		fmt.Fprintf(log, "  %s %-40s %d requests, %v, err %v\n", patchlevelCase, name, r.requests, r.wall.Round(time.Millisecond), err)
		return r
	}
	rep := &plReport{}
	rep.check = measure("staleness check alone", "`rebase.Check` in process: what `bases` made before the report", func() error {
		rc := registry.New(registry.WithKeychain(staticKeychain{d.auth}))
		ref, err := rc.ParseReference(app)
		if err != nil {
			return err
		}
		_, err = rebase.Check(ctx, ref, rebase.Options{Registry: rc})
		return err
	})
	var out string
	rep.bases = measure("imgctl bases --at "+plAt, "`imgctl bases APP --at "+plAt+" -o json`", func() (err error) {
		out, err = me.exec(ctx, "bases", app, "--at", plAt, "-o", "json")
		if exitCode(err) == 1 { // stale: the report is complete
			err = nil
		}
		return err
	})
	if rep.bases.err == nil {
		rep.behind = revisionsBehind(out)
	}
	rep.crane = measure("crane by hand", "`crane manifest APP`, `crane config APP@CHILD` per Windows variant (its os.version), "+
		"`crane ls "+mcrtest.Nanoserver+"`, then `crane config REPO:TAG` for each newer `10.0.BUILD.REV` tag of the variants' builds "+
		"(no `-amd64` twins, no other builds)", func() error {
		return craneByHand(ctx, cr, app, d.reg.Host()+"/"+mcrtest.Nanoserver)
	})
	return rep.section(ctx), rep.goals(), nil
}

// exitCode is the exit code of a failed child, 0 for nil and -1 for
// other errors.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

var revTagRE = regexp.MustCompile(`^10\.0\.(\d+)\.(\d+)$`)

// craneByHand learns what the patch-level report says with crane alone:
// the variants' builds and revisions, the base repository's tags, and the
// created date of every newer revision of those builds.
func craneByHand(ctx context.Context, cr *crane, app, repo string) error {
	raw, err := cr.exec(ctx, "--insecure", "manifest", app)
	if err != nil {
		return err
	}
	var idx struct {
		Manifests []struct {
			Digest   string `json:"digest"`
			Platform struct {
				OS string `json:"os"`
			} `json:"platform"`
		} `json:"manifests"`
	}
	if err := json.Unmarshal([]byte(raw), &idx); err != nil {
		return err
	}
	have := map[string]int{} // build -> the variant's revision
	ref := app[:strings.LastIndex(app, ":")]
	for _, m := range idx.Manifests {
		if m.Platform.OS != "windows" {
			continue
		}
		cfg, err := cr.exec(ctx, "--insecure", "config", ref+"@"+m.Digest)
		if err != nil {
			return err
		}
		var c struct {
			OSVersion string `json:"os.version"`
		}
		if err := json.Unmarshal([]byte(cfg), &c); err != nil {
			return err
		}
		if s := revTagRE.FindStringSubmatch(c.OSVersion); s != nil {
			have[s[1]], _ = strconv.Atoi(s[2])
		}
	}
	tags, err := cr.exec(ctx, "--insecure", "ls", repo)
	if err != nil {
		return err
	}
	for _, tag := range strings.Fields(tags) {
		s := revTagRE.FindStringSubmatch(tag)
		if s == nil {
			continue
		}
		mine, ok := have[s[1]]
		if rev, _ := strconv.Atoi(s[2]); !ok || rev <= mine {
			continue
		}
		if _, err := cr.exec(ctx, "--insecure", "--platform", "windows/amd64", "config", repo+":"+tag); err != nil {
			return err
		}
	}
	return nil
}
