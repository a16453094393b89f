package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/internal/testing/buildtest"
	"github.com/imgctl/imgctl/internal/testing/disttest"
)

// TestDistCases runs merge-3 and rebase-1-windows once for imgctl, in
// process, on the distribution registry: the fixtures set up there, the
// results are correct, no layer passes through imgctl, and the limits are
// issue 17's count for these fixtures (merge: checked against the source
// manifests as the registry serves them; rebase-1-windows: the issue's
// ~14 plus the provenance write).
func TestDistCases(t *testing.T) {
	buildtest.SkipShort(t, disttest.Needs)
	ctx := context.Background()
	d, err := startDistEnv(false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	disttest.SetDockerConfig(t, d.reg.Host(), d.dist.User(), d.dist.Password())
	d.bytes.setTracing(true)
	res := &distResults{cases: filter(distCases(), "merge-3,rebase-1-windows", distCase.Name)}
	for _, c := range res.cases {
		t.Run(c.Name(), func(t *testing.T) {
			if err := c.Setup(ctx, d.env); err != nil {
				t.Fatal(err)
			}
			cr := runCase(ctx, d.env, c, []tool{inProcessImgctl{}}, 1, io.Discard)
			res.basic = append(res.basic, cr)
			s := cr.tools[0].samples[0]
			if s.Err != nil {
				t.Fatal(s.Err)
			}
			t.Logf("%s: %s\n%s", c.Name(), s.Stats, strings.Join(s.Trace, "\n"))
			if tr := cr.tools[0]; tr.checkErr != nil {
				t.Fatal(tr.checkErr)
			}
			for _, f := range cr.tools[0].findings {
				if !f.OK {
					t.Errorf("finding %s = %s", f.Name, f.Value)
				}
			}
			if s.Bytes.Layer != 0 || s.Stats.Mounts == 0 {
				t.Errorf("layer bytes %d, mounts %d: want 0 and some", s.Bytes.Layer, s.Stats.Mounts)
			}
			limit, how := c.limit()
			want := 19 // 14 by the count (its "~14") + 5 for the provenance of the one attestation
			if mc, ok := c.benchCase.(*mergeCase); ok {
				want = 3 + mergeReads(ctx, t, d.env, mc)
			}
			if limit != want || !strings.HasSuffix(how, "= "+strconv.Itoa(want)) {
				t.Errorf("limit %d (%s), want %d", limit, how, want)
			}
			if c.goal() != limit+1 {
				t.Errorf("goal %d, want the limit + the issue's margin of 1", c.goal())
			}
			if s.Stats.Total() < limit {
				t.Errorf("imgctl made %d requests, fewer than the limit %d: the limit is wrong", s.Stats.Total(), limit)
			}
		})
	} // The report's summary row of each case: its limit, imgctl's median
	// and the goal, judged as the goal lines judge it.
	if len(res.basic) != len(res.cases) {
		t.Fatal("not every case ran")
	}
	md := res.markdown()
	for i, c := range res.cases {
		limit, _ := c.limit()
		ok, _ := res.met(i)
		row := fmt.Sprintf("| %s | %d | %d | %d | %s |", c.Name(), limit,
			summarize(res.basic[i].tools[0].samples).Total, c.goal(), passFail(ok))
		if !strings.Contains(md, row) {
			t.Errorf("the report has no row %q:\n%s", row, md)
		}
	}
}

// mergeReads counts, from the source manifests on the registry, what a
// merge of c's sources must do per source: GET manifest, GET config, mount
// the config and every layer, PUT the manifest.
func mergeReads(ctx context.Context, t *testing.T, e *env, c *mergeCase) int {
	t.Helper()
	n := 0
	for _, s := range c.sources {
		ref, err := name.ParseReference(s.ref, name.Insecure)
		if err != nil {
			t.Fatal(err)
		}
		img, err := remote.Image(ref, e.remote(ctx)...)
		if err != nil {
			t.Fatal(err)
		}
		m, err := img.Manifest()
		if err != nil {
			t.Fatal(err)
		}
		n += 2 + 1 + len(m.Layers) + 1
	}
	return n
}
