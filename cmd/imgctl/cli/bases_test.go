package cli

import (
	"encoding/json"
	"strings"
	"testing"

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
