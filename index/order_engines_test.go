package index

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/snapshot"
	"github.com/imgctl/imgctl/verify"
)

// TestIndexOrderNeverPicksOlder merges Windows images given in random
// order, with Create and with PublishPrepared (rebase's way to publish),
// and checks, with every index-order profile (containerd 1.7 to
// 2.1.5 and Docker's containerd store), that the index create writes never
// makes such an engine run an older build than the newest compatible one:
// verify reports no order-picks-older on any target, and each engine runs
// what the newest containerd line runs.
func TestIndexOrderNeverPicksOlder(t *testing.T) {
	reg := regtest.New(t)
	r := rand.New(rand.NewPCG(24, 7))
	builds := []int{17763, 20348, 26100}
	var engines []platform.Engine
	for _, n := range []string{platform.ContainerdLegacy, platform.ContainerdIndexOrder, platform.DockerStoreLTSCFloor, platform.DockerStoreOSFeatures} {
		e, err := platform.EngineByName(n)
		if err != nil {
			t.Fatal(err)
		}
		engines = append(engines, e)
	}
	ts, err := platform.ParseTargets([]string{"ltsc2019", "ltsc2022", "ltsc2025", "10.0.26200"})
	if err != nil {
		t.Fatal(err)
	}
	for round := range 6 {
		var srcs []name.Reference
		for i, b := range r.Perm(len(builds)) {
			v := fmt.Sprintf("10.0.%d.%d", builds[b], 1000+r.IntN(40000))
			img := regtest.Must(regtest.WindowsImage(v))(t)
			srcs = append(srcs, pushed(t, reg, fmt.Sprintf("src:r%d-%d", round, i), img))
		}
		srcs = append(srcs, pushed(t, reg, fmt.Sprintf("src:r%d-linux", round), regtest.Must(regtest.LinuxImage("amd64"))(t)))
		publish := func(tg name.Tag) (*Result, error) { return Create(ctx, tg, srcs, testOptions()) }
		if round%2 == 1 {
			src := regtest.Must(reg.Repo("src"))(t)
			var children []Prepared
			for _, ref := range srcs {
				img := regtest.Must(remote.Image(ref))(t)
				children = append(children, preparedOf(t, img, src))
			}
			publish = func(tg name.Tag) (*Result, error) { return PublishPrepared(ctx, tg, children, nil, testOptions()) }
		}
		res, err := publish(tag(t, reg, fmt.Sprintf("app:r%d", round)))
		if err != nil {
			t.Fatal(err)
		}
		idx, err := remote.Index(res.Ref)
		if err != nil {
			t.Fatal(err)
		}
		s, err := snapshot.LoadIndex(ctx, idx, 4)
		if err != nil {
			t.Fatal(err)
		}
		rep := verify.Evaluate(res.Ref.String(), s, verify.Options{Targets: ts, Engines: append([]platform.Engine{platform.ContainerdEngine()}, engines...)})
		for _, f := range rep.Findings {
			if f.Rule == verify.RuleOrderPicksOlder || f.Rule == verify.RuleEngineDisagreement {
				t.Errorf("round %d: %s: %s", round, f.Rule, f.Message)
			}
		}
	}
}
