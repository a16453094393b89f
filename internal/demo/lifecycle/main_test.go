package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/imgctl/imgctl/platform"
)

// TestLifecycle runs the whole demo, on a real buildkitd, and checks the
// transitions it shows: the release holds the build; Patch Tuesday moves
// the ltsc2025 base to a higher revision of the same build; bases exits 1
// before the rebase and 0 after; the rebase moves the ltsc2025 variant
// (digest and os.version) and nothing else; the ltsc2025 node then pulls
// the new variant; the old release tag is refused and the new one holds
// the rebased index.
func TestLifecycle(t *testing.T) {
	var buf bytes.Buffer
	out, err := run(context.Background(), &buf)
	t.Log(buf.String())
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	const win25 = "windows/amd64 ltsc2025"
	if got := len(out.built.Platforms); got != 4 {
		t.Fatalf("the build has %d images (%v), want 4", got, out.built.Platforms)
	}
	if out.release.Digest != out.built.Digest {
		t.Errorf("release 1.0 holds %s, want the build's %s", out.release.Digest, out.built.Digest)
	}

	before, after := version(t, out.baseBefore.OSVersion), version(t, out.baseAfter.OSVersion)
	if after.BuildPrefix() != before.BuildPrefix() || after.Revision <= before.Revision || out.baseAfter.Digest == out.baseBefore.Digest {
		t.Errorf("Patch Tuesday moved the base from %+v to %+v; want a new digest and a higher revision of the same build", out.baseBefore, out.baseAfter)
	}
	if out.basesBefore != 1 || out.basesAfter != 0 {
		t.Errorf("imgctl bases exited %d before the rebase and %d after, want 1 and 0", out.basesBefore, out.basesAfter)
	}

	if out.rebased.Digest == out.built.Digest {
		t.Errorf("the rebase kept the index digest %s", out.built.Digest)
	}
	for _, p := range out.built.Platforms {
		old, cur := out.built.Variants[p], out.rebased.Variants[p]
		switch {
		case p != win25 && cur != old:
			t.Errorf("%s changed from %+v to %+v; only the ltsc2025 variant should", p, old, cur)
		case p == win25 && (cur.Digest == old.Digest || old.OSVersion != out.baseBefore.OSVersion || cur.OSVersion != out.baseAfter.OSVersion):
			t.Errorf("%s went from %+v to %+v; want a new digest and os.version %s → %s", p, old, cur, out.baseBefore.OSVersion, out.baseAfter.OSVersion)
		}
	}
	if got, want := out.rebased.Selected["ltsc2025"], out.rebased.Variants[win25]; got != want {
		t.Errorf("an ltsc2025 node pulls %+v after the rebase, want the rebased variant %+v", got, want)
	}
	if got, want := out.rebased.Selected["ltsc2022"], out.built.Selected["ltsc2022"]; got != want || want.Digest == "" {
		t.Errorf("an ltsc2022 node pulls %+v after the rebase, %+v before; want the same variant", got, want)
	}

	if len(out.nodesAfter) != 4 || len(out.nodesBefore) != 4 {
		t.Fatalf("verify --nodes reported %d and %d nodes, want the sample cluster's 4", len(out.nodesBefore), len(out.nodesAfter))
	}
	for i, n := range out.nodesAfter {
		moved := n.Selected != out.nodesBefore[i].Selected
		if want := n.Build == 26100; moved != want || n.Selected == "" {
			t.Errorf("node %s (build %d) pulls %s after the rebase, %s before; want a change only on the ltsc2025 node",
				n.Target, n.Build, n.Selected, out.nodesBefore[i].Selected)
		}
	}

	if out.retag != 2 {
		t.Errorf("promote over the existing release tag exited %d, want 2 (tags are immutable)", out.retag)
	}
	if out.nextRelease.Digest != out.rebased.Digest {
		t.Errorf("release 1.0.1 holds %s, want the rebased %s", out.nextRelease.Digest, out.rebased.Digest)
	}
	if want := "os.version " + out.baseBefore.OSVersion + " → " + out.baseAfter.OSVersion; !strings.Contains(buf.String(), want) {
		t.Errorf("the story does not show %q", want)
	}
}

func version(t *testing.T, s string) platform.Version {
	t.Helper()
	v, err := platform.ParseVersion(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
