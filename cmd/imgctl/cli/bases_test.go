package cli

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// basesJSON is the bases -o json contract, decoded strictly.
type basesJSON struct {
	Ref      string `json:"ref"`
	Digest   string `json:"digest"`
	Stale    *bool  `json:"stale"`
	At       string `json:"at"`
	Variants []struct {
		Platform     string          `json:"platform"`
		Digest       string          `json:"digest"`
		BaseName     string          `json:"base_name"`
		BaseSource   string          `json:"base_source"`
		OldBase      string          `json:"old_base"`
		NewBase      string          `json:"new_base"`
		OldBaseIndex string          `json:"old_base_index"`
		OldBaseImage string          `json:"old_base_image"`
		NewBaseIndex string          `json:"new_base_index"`
		NewBaseImage string          `json:"new_base_image"`
		OldOSVersion string          `json:"old_os_version"`
		NewOSVersion string          `json:"new_os_version"`
		Stale        bool            `json:"stale"`
		BuildChange  bool            `json:"build_change"`
		Note         string          `json:"note"`
		PatchLevel   json.RawMessage `json:"patch_level"`
		// Linux variants: the base configs' created.
		OldBaseCreated    *time.Time `json:"old_base_created"`
		NewBaseCreated    *time.Time `json:"new_base_created"`
		BaseCreatedReason string     `json:"base_created_reason"`
	} `json:"variants"`
}

func TestBasesCommand(t *testing.T) {
	reg := regtest.New(t)
	app := rebaseFixture(t, reg)
	out, errOut, code := run(t, "bases", app)
	if code != 0 || !strings.Contains(out, "0 of 3 variant(s) stale") || !strings.Contains(out, "base/nanoserver:ltsc2025") ||
		!strings.Contains(errOut, "note: reading the base images from their registries directly, not through a builder's mirrors") {
		t.Fatalf("current: exit %d\n%s%s", code, out, errOut)
	}
	moveBases(t, reg, winFeb)
	out, errOut, code = run(t, "bases", app)
	if code != 1 || !strings.Contains(out, "3 of 3 variant(s) stale") || !strings.Contains(out, winJan+"  "+winFeb+"  stale") {
		t.Fatalf("stale: exit %d\n%s%s", code, out, errOut)
	}
	out, _, code = run(t, "bases", app, "-o", "json")
	var st basesJSON
	decodeStrict(t, out, &st)
	win := st.Variants[2]
	// The recorded base is an image, the base tag an index: the images
	// are what to compare.
	if win.OldBaseIndex != "" || win.OldBaseImage != win.OldBase || win.NewBaseImage != win.NewBase || win.NewBaseIndex == "" ||
		win.OldBaseImage == win.NewBaseImage || st.Variants[0].PatchLevel != nil || st.At == "" {
		t.Errorf("base digests: %+v", st)
	}
	// The base has no 10.0.BUILD.REV tags: the patch level is unknown,
	// with the reason.
	var pl patchJSON
	decode(t, string(win.PatchLevel), &pl)
	if pl.Status != "unknown" || !strings.Contains(pl.Reason, "has no 10.0.26100.REVISION tags") || pl.Release != "ltsc2025" || pl.Lifecycle == nil {
		t.Errorf("patch level: %s", win.PatchLevel)
	}
	if code != 1 || st.Stale == nil || !*st.Stale || len(st.Variants) != 3 || st.Ref != app || !strings.HasPrefix(st.Digest, "sha256:") ||
		win.Platform != "windows/amd64:"+winJan || win.BaseSource != "manifest-annotation" || !win.Stale ||
		win.OldOSVersion != winJan || win.NewOSVersion != winFeb || !strings.HasPrefix(win.NewBase, "sha256:") || win.OldBase == win.NewBase {
		t.Errorf("JSON: exit %d %+v", code, st)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bases", reg.Host() + "/nothing:1"}, "fetching"},
		{[]string{"bases", reg.Host() + "/base/distroless:latest"}, "no base image known"},
		{[]string{"bases", app, "--base", "=x"}, "want os=REF"},
	} {
		if out, errOut, code := run(t, tc.args...); code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, want 2 and %q\n%s%s", tc.args, code, tc.want, out, errOut)
		}
	}
}

// TestBasesLinuxBaseCreated checks that bases reports, for each Linux
// variant, the created of its recorded base image and of the base's
// current one, read from their configs, in the JSON, the text table and
// the step summary; Windows variants carry theirs in the patch level.
func TestBasesLinuxBaseCreated(t *testing.T) {
	reg := regtest.New(t)
	app := rebaseFixture(t, reg)
	moved := time.Date(2026, 11, 3, 8, 0, 0, 0, time.UTC)
	var lin [2]v1.Image
	for i, img := range linuxBasePair(t, "nov") {
		m, err := mutate.CreatedAt(img, v1.Time{Time: moved})
		lin[i] = must(t, m, err)
	}
	push(t, reg, "base/distroless:latest", index(t, regtest.Entry{Image: lin[0]}, regtest.Entry{Image: lin[1]}))
	summary := t.TempDir() + "/summary.md"
	t.Setenv("GITHUB_STEP_SUMMARY", summary)
	out, errOut, code := run(t, "bases", app, "-o", "json")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (stale)\n%s%s", code, out, errOut)
	}
	var st basesJSON
	decodeStrict(t, out, &st)
	for _, v := range st.Variants[:2] {
		if v.OldBaseCreated == nil || !v.OldBaseCreated.Equal(regtest.FixtureTime) || v.NewBaseCreated == nil || !v.NewBaseCreated.Equal(moved) || v.BaseCreatedReason != "" {
			t.Errorf("%s: base created %v -> %v (%q), want %v -> %v", v.Platform, v.OldBaseCreated, v.NewBaseCreated, v.BaseCreatedReason, regtest.FixtureTime, moved)
		}
	}
	if w := st.Variants[2]; w.OldBaseCreated != nil || w.NewBaseCreated != nil {
		t.Errorf("the Windows variant has Linux base dates: %+v", w)
	}
	out, _, _ = run(t, "bases", app, "--github")
	row := regexp.MustCompile(`(?m)^linux/amd64 +` + regtest.FixtureTime.UTC().Format(time.DateOnly) + ` +2026-11-03 +-$`)
	if !strings.Contains(out, "BASE CREATED") || !row.MatchString(out) {
		t.Errorf("text: no row %q:\n%s", row, out)
	}
	b, err := os.ReadFile(summary)
	if !strings.Contains(string(b), "| linux/arm64/v8 | "+regtest.FixtureTime.UTC().Format(time.DateOnly)+" | 2026-11-03 |") {
		t.Errorf("step summary (%v):\n%s", err, b)
	}

	// A reproducible base (distroless writes the epoch) has no date to
	// report: the reason says so instead of 1970-01-01.
	for i, img := range linuxBasePair(t, "epoch") {
		m, err := mutate.CreatedAt(img, v1.Time{Time: time.Unix(0, 0)})
		lin[i] = must(t, m, err)
	}
	push(t, reg, "base/distroless:latest", index(t, regtest.Entry{Image: lin[0]}, regtest.Entry{Image: lin[1]}))
	out, errOut, _ = run(t, "bases", app, "-o", "json")
	st = basesJSON{}
	decodeStrict(t, out, &st)
	for _, v := range st.Variants[:2] {
		if v.NewBaseCreated != nil || !strings.Contains(v.BaseCreatedReason, "Unix epoch") {
			t.Errorf("%s: epoch base created %v (%q), want no date and the reason\n%s", v.Platform, v.NewBaseCreated, v.BaseCreatedReason, errOut)
		}
	}
}
