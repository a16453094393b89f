package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/imgctl/imgctl/internal/tools/demo/lifecycle/story"
	"github.com/imgctl/imgctl/platform"
)

// lifecycle runs the lifecycle demo's story (make demo-lifecycle) on
// TestBuildE2E's registry, bases and buildkitd, and checks the transitions
// it shows: the release holds the build; Patch Tuesday moves the ltsc2025
// base to a higher revision of the same build; bases exits 1 before the
// rebase and 0 after; the rebase moves the ltsc2025 variant (digest and
// os.version) and nothing else; the ltsc2025 node then pulls the new
// variant; the old release tag is refused and the new one holds the
// rebased index. The story's build step has the daemon and the build
// arguments of TestBuildE2E's first build (e.baseArgs, VERSION=e2e), so
// BuildKit finds every step cached and no full build is repeated. Its
// Patch Tuesday moves the ltsc2025 base tag, so it runs after the
// subtests that build from the original and before the supply chain test,
// which moves the tag again.
func (e *e2e) lifecycle(t *testing.T) {
	var buf bytes.Buffer
	out, err := story.Run(t.Context(), &buf, story.Config{Imgctl: Execute, Version: "e2e", BuildProgress: "rawjson",
		Shared: &story.Fixture{Registry: e.reg.Host(), Bases: e.bases, Builder: e.daemon.Addr}})
	if err != nil {
		t.Log(buf.String())
		t.Fatalf("story: %v", err)
	}
	if compiles, cached := compileVertices(buf.String()); compiles == 0 || cached != compiles {
		t.Errorf("the story's build: %d compile vertices completed, %d cached; want all cached (no full build repeated)", compiles, cached)
	}
	const win25 = "windows/amd64 ltsc2025"
	if got := len(out.Built.Platforms); got != 4 {
		t.Fatalf("the build has %d images (%v), want 4", got, out.Built.Platforms)
	}
	if out.Release.Digest != out.Built.Digest {
		t.Errorf("release 1.0 holds %s, want the build's %s", out.Release.Digest, out.Built.Digest)
	}

	before, after := osVersion(t, out.BaseBefore.OSVersion), osVersion(t, out.BaseAfter.OSVersion)
	if after.BuildPrefix() != before.BuildPrefix() || after.Revision <= before.Revision || out.BaseAfter.Digest == out.BaseBefore.Digest {
		t.Errorf("Patch Tuesday moved the base from %+v to %+v; want a new digest and a higher revision of the same build", out.BaseBefore, out.BaseAfter)
	}
	if out.BasesBefore != ExitFailed || out.BasesAfter != ExitOK {
		t.Errorf("imgctl bases exited %d before the rebase and %d after, want 1 and 0", out.BasesBefore, out.BasesAfter)
	}

	if out.Rebased.Digest == out.Built.Digest {
		t.Errorf("the rebase kept the index digest %s", out.Built.Digest)
	}
	for _, p := range out.Built.Platforms {
		old, cur := out.Built.Variants[p], out.Rebased.Variants[p]
		switch {
		case p != win25 && cur != old:
			t.Errorf("%s changed from %+v to %+v; only the ltsc2025 variant should", p, old, cur)
		case p == win25 && (cur.Digest == old.Digest || old.OSVersion != out.BaseBefore.OSVersion || cur.OSVersion != out.BaseAfter.OSVersion):
			t.Errorf("%s went from %+v to %+v; want a new digest and os.version %s → %s", p, old, cur, out.BaseBefore.OSVersion, out.BaseAfter.OSVersion)
		}
	}
	if got, want := out.Rebased.Selected["ltsc2025"], out.Rebased.Variants[win25]; got != want {
		t.Errorf("an ltsc2025 node pulls %+v after the rebase, want the rebased variant %+v", got, want)
	}
	if got, want := out.Rebased.Selected["ltsc2022"], out.Built.Selected["ltsc2022"]; got != want || want.Digest == "" {
		t.Errorf("an ltsc2022 node pulls %+v after the rebase, %+v before; want the same variant", got, want)
	}

	if len(out.NodesAfter) != 4 || len(out.NodesBefore) != 4 {
		t.Fatalf("verify --nodes reported %d and %d nodes, want the sample cluster's 4", len(out.NodesBefore), len(out.NodesAfter))
	}
	for i, n := range out.NodesAfter {
		moved := n.Selected != out.NodesBefore[i].Selected
		if want := n.Build == 26100; moved != want || n.Selected == "" {
			t.Errorf("node %s (build %d) pulls %s after the rebase, %s before; want a change only on the ltsc2025 node",
				n.Target, n.Build, n.Selected, out.NodesBefore[i].Selected)
		}
	}

	if out.Retag != ExitError {
		t.Errorf("promote over the existing release tag exited %d, want 2 (tags are immutable)", out.Retag)
	}
	if out.NextRelease.Digest != out.Rebased.Digest {
		t.Errorf("release 1.0.1 holds %s, want the rebased %s", out.NextRelease.Digest, out.Rebased.Digest)
	}
	if patched := strings.Join(out.Patched, " ") + " "; len(out.Patched) != 2 ||
		!strings.Contains(patched, "/release/hello-tools:2.1.1 ") || !strings.Contains(patched, "/release/hello:1.0-r1 ") {
		t.Errorf("imgctl patch promoted the fleet to %v, want release/hello:1.0-r1 and release/hello-tools:2.1.1", out.Patched)
	}
	if want := "os.version " + out.BaseBefore.OSVersion + " → " + out.BaseAfter.OSVersion; !strings.Contains(buf.String(), want) {
		t.Errorf("the story does not show %q", want)
	}
}

// osVersion parses an os.version the story read, failing the test when it
// cannot.
func osVersion(t *testing.T, s string) platform.Version {
	t.Helper()
	v, err := platform.ParseVersion(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
