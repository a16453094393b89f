package build

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/distribution/reference"
	"github.com/moby/buildkit/client"
	gateway "github.com/moby/buildkit/frontend/gateway/client"

	"github.com/imgctl/imgctl/internal/testing/buildtest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/registry"
)

// TestReadIndex, on a real buildkitd: the index a base resolved to is read
// from the daemon's content store once the daemon's resolver has fetched
// it, with no registry request and no note; an index the daemon does not
// hold is read from the registry directly, with a note that says so.
func TestReadIndex(t *testing.T) {
	ctx := context.Background()
	reg := regtest.New(t)
	d := buildtest.New(t, buildtest.Options{InsecureRegistries: []string{reg.Host()}})
	c, err := d.Client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	idx := regtest.Must(regtest.MultiOSIndex())(t)
	raw := regtest.Must(idx.RawManifest())(t)
	ref := reg.MustRef(t, "base:multi")
	top := regtest.MustPush(t, ref, idx)
	q := baseQuery{ref: ref, named: regtest.Must(reference.ParseNormalizedNamed(ref.String()))(t), plat: windowsAMD64, release: 26100}
	var notes []string
	r := &baseResolver{daemon: c, rc: registry.New(), note: func(n string) { notes = append(notes, n) }}

	got, err := r.readIndex(ctx, q, &ResolvedBase{top: top, OSVersion: regtest.OSVersionLTSC2022})
	if err != nil || !bytes.Equal(got, raw) {
		t.Fatalf("not in the daemon: %v, %d bytes, want the index", err, len(got))
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "registry directly, not through the builder") || !strings.Contains(notes[0], ref.Context().String()+"@"+top.String()) {
		t.Errorf("notes %q, want one naming the direct read of %s@%s", notes, ref.Context(), top)
	}

	_, err = c.Build(ctx, client.SolveOpt{Internal: true}, "imgctl-test", func(ctx context.Context, gw gateway.Client) (*gateway.Result, error) {
		r.gw = gw
		_, _, err := r.config(ctx, ref.String(), windowsAMD64)
		return gateway.NewResult(), err
	}, nil)
	if err != nil {
		t.Fatalf("resolving through the daemon: %v", err)
	}
	notes = nil
	reg.ResetStats()
	got, err = r.readIndex(ctx, q, &ResolvedBase{top: top, OSVersion: regtest.OSVersionLTSC2022})
	if err != nil || !bytes.Equal(got, raw) || len(notes) != 0 || reg.Stats().Total() != 0 {
		t.Errorf("resolved by the daemon: %v, %d bytes, notes %q, registry %s; want the index from the daemon alone", err, len(got), notes, reg.Stats())
	}
}
