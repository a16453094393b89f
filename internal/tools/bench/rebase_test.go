package main

import (
	"context"
	"io"
	"testing"
)

// TestImgctlRebase runs the rebase case for imgctl only, in process: the
// result is correct, no layer passes through imgctl, and the new configs
// count as configs.
func TestImgctlRebase(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	ctx := context.Background()
	e := startTestEnv(t)
	c := &rebaseCase{}
	if err := c.Setup(ctx, e); err != nil {
		t.Fatal(err)
	}
	cr := runCase(ctx, e, c, []tool{inProcessImgctl{}}, 2, io.Discard)
	tr := cr.tools[0]
	for i, s := range tr.samples {
		if s.Err != nil {
			t.Fatalf("run %d: %v", i+1, s.Err)
		}
		if s.Bytes.Layer != 0 || s.Bytes.Config == 0 || s.Stats.Mounts == 0 || s.Stats.Put == 0 {
			t.Errorf("run %d: %+v, %s", i+1, s.Bytes, s.Stats)
		}
	}
	if tr.checkErr != nil {
		t.Fatal(tr.checkErr)
	}
	for _, f := range tr.findings {
		if !f.OK {
			t.Errorf("finding %s = %s", f.Name, f.Value)
		}
	}
	r := &report{runs: 2, cases: []caseResult{cr}}
	for _, g := range r.rebaseGoals() {
		if !g.ok && g.title != "imgctl rebase makes fewer registry requests than either peer" {
			t.Errorf("goal %q: %s", g.title, g.detail)
		}
	}
}
