package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/cmd/imgctl/cli"
	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// inProcessImgctl runs imgctl through cli.Execute, so the test needs no binary.
type inProcessImgctl struct{}

var _ tool = inProcessImgctl{}

func (inProcessImgctl) Name() string                            { return "imgctl" }
func (inProcessImgctl) Version() string                         { return "in-process" }
func (inProcessImgctl) Install(context.Context, string) error   { return nil }
func (inProcessImgctl) Configure(context.Context, string) error { return nil }

func (inProcessImgctl) Run(ctx context.Context, o op) error {
	args, err := imgctlArgs(o, false)
	if err != nil {
		return err
	}
	var stderr bytes.Buffer
	if code := cli.Execute(ctx, args, strings.NewReader(""), io.Discard, &stderr); code != cli.ExitOK {
		return fmt.Errorf("imgctl %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
	}
	return nil
}

func startTestEnv(t *testing.T) *env {
	t.Helper()
	e, err := startEnv()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// blobSizes returns the compressed sizes of img's config and layers.
func blobSizes(t *testing.T, img v1.Image) (config, layers, manifest int64) {
	t.Helper()
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range m.Layers {
		layers += l.Size
	}
	raw, err := img.RawManifest()
	if err != nil {
		t.Fatal(err)
	}
	return m.Config.Size, layers, int64(len(raw))
}

// TestMeasurePushAndPull checks the byte accounting against what a push and
// a pull must move, and against regtest's own blob counts.
func TestMeasurePushAndPull(t *testing.T) {
	e := startTestEnv(t)
	img, err := sourceImage(win("amd64", regtest.OSVersionLTSC2025), "test")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	e.bytes.markConfig(cfg.String())
	wantConfig, wantLayers, wantManifest := blobSizes(t, img)
	if wantLayers < runtimeLayerSize+appLayerSize {
		t.Fatalf("layers are %d bytes, want at least the payload %d", wantLayers, runtimeLayerSize+appLayerSize)
	}

	ref, err := e.reg.Ref("push/test:1")
	if err != nil {
		t.Fatal(err)
	}
	push := e.measure(func() error { _, err := regtest.Push(ref, img); return err })
	if push.Err != nil {
		t.Fatal(push.Err)
	}
	if push.Stats.Total() == 0 || push.Stats.Put == 0 {
		t.Errorf("push counted %v", push.Stats)
	}
	if got := (byteCounts{Manifest: wantManifest, Config: wantConfig, Layer: wantLayers}); push.Bytes != got {
		t.Errorf("push bytes = %+v, want %+v", push.Bytes, got)
	}
	if got := push.Bytes.Config + push.Bytes.Layer; got != push.Stats.BlobBytesReceived {
		t.Errorf("push blob bytes %d, regtest counted %d", got, push.Stats.BlobBytesReceived)
	}

	pull := e.measure(func() error {
		got, err := remote.Image(ref)
		if err != nil {
			return err
		}
		ls, err := got.Layers()
		if err != nil {
			return err
		}
		for _, l := range ls {
			rc, err := l.Compressed()
			if err != nil {
				return err
			}
			_, err = io.Copy(io.Discard, rc)
			rc.Close()
			if err != nil {
				return err
			}
		}
		_, err = got.RawConfigFile()
		return err
	})
	if pull.Err != nil {
		t.Fatal(pull.Err)
	}
	if pull.Bytes.Layer != wantLayers || pull.Bytes.Config != wantConfig {
		t.Errorf("pull bytes = %+v, want layers %d config %d", pull.Bytes, wantLayers, wantConfig)
	}
	if got := pull.Bytes.Config + pull.Bytes.Layer; got != pull.Stats.BlobBytesSent {
		t.Errorf("pull blob bytes %d, regtest counted %d", got, pull.Stats.BlobBytesSent)
	}
	if pull.Stats.Put != 0 || pull.Stats.Get == 0 {
		t.Errorf("pull counted %v", pull.Stats)
	}
}

// TestImgctlMerge3 runs the merge-3 case for imgctl only, in process, and
// checks that the run was counted and that no layer passed through imgctl.
func TestImgctlMerge3(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	ctx := context.Background()
	e := startTestEnv(t)
	c := cases()[0]
	if err := c.Setup(ctx, e); err != nil {
		t.Fatal(err)
	}
	cr := runCase(ctx, e, c, []tool{inProcessImgctl{}}, 1, io.Discard)
	tr := cr.tools[0]
	s := tr.samples[0]
	if s.Err != nil && strings.Contains(s.Err.Error(), `unknown command "index"`) {
		t.Skipf("imgctl has no index command yet: %v", s.Err)
	}
	if s.Err != nil {
		t.Fatal(s.Err)
	}
	if s.Stats.Total() == 0 || s.Stats.Put == 0 {
		t.Errorf("imgctl run counted %v", s.Stats)
	}
	if s.Bytes.Manifest == 0 {
		t.Errorf("no manifest bytes counted: %+v", s.Bytes)
	}
	if s.Bytes.Layer != 0 {
		t.Errorf("%d layer bytes passed through imgctl in a same-registry merge", s.Bytes.Layer)
	}
	if tr.checkErr != nil {
		t.Fatal(tr.checkErr)
	}
	for _, name := range []string{findEntries, findChildren, findOSVersion} {
		if f, ok := findingOf(tr, name); !ok || !f.OK {
			t.Errorf("finding %s = %+v", name, f)
		}
	}
}

// fakeTool stands in for a tool in report tests.
type fakeTool struct{ name string }

func (f fakeTool) Name() string                          { return f.name }
func (fakeTool) Version() string                         { return "v0" }
func (fakeTool) Install(context.Context, string) error   { return nil }
func (fakeTool) Configure(context.Context, string) error { return nil }
func (fakeTool) Run(context.Context, op) error           { return nil }

func samples(total int, layer int64, err error) []sample {
	var ss []sample
	for i := range 3 {
		ss = append(ss, sample{Stats: regtest.Stats{Get: total + i - 1}, Bytes: byteCounts{Layer: layer}, Wall: time.Millisecond, Err: err})
	}
	return ss
}

func TestGoals(t *testing.T) {
	osv := func(ok bool) []finding { return []finding{{Name: findOSVersion, Value: "x", OK: ok}} }
	mk := func(me, crane, regctl int, layer int64, peerOSV bool) caseResult {
		return caseResult{c: cases()[0], tools: []*toolResult{
			{tool: fakeTool{"imgctl"}, samples: samples(me, layer, nil), findings: osv(true)},
			{tool: fakeTool{"imgctl+verify"}, samples: samples(1, 0, nil), findings: osv(true)},
			{tool: fakeTool{"crane"}, samples: samples(crane, 0, nil), findings: osv(peerOSV)},
			{tool: fakeTool{"regctl"}, samples: samples(regctl, 0, nil), findings: osv(true)},
		}}
	}
	for _, tc := range []struct {
		name string
		cr   caseResult
		want [3]bool
	}{
		{"all pass", mk(10, 20, 30, 0, false), [3]bool{true, true, true}},
		{"tie is not fewer", mk(20, 20, 30, 0, true), [3]bool{false, true, true}},
		{"layer bytes", mk(10, 20, 30, 5, true), [3]bool{true, false, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &report{runs: 3, cases: []caseResult{tc.cr}}
			gs := r.goals()
			for i, g := range gs {
				if g.ok != tc.want[i] {
					t.Errorf("goal %q = %v, want %v (%s)", g.title, g.ok, tc.want[i], g.detail)
				}
			}
			md, err := r.markdown(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(md, "Generated by `make bench`") || !strings.Contains(md, "## Goal") {
				t.Errorf("report lacks header or goal section:\n%s", md)
			}
		})
	}
	failed := mk(10, 20, 30, 0, true)
	failed.tools[0].samples = samples(0, 0, errors.New("boom"))
	failed.tools[0].findings = nil
	r := &report{runs: 3, cases: []caseResult{failed}}
	for _, g := range r.goals() {
		if g.ok {
			t.Errorf("goal %q passes although imgctl failed", g.title)
		}
	}
}

func TestMedian(t *testing.T) {
	if got := median([]int{5, 1, 3}); got != 3 {
		t.Errorf("median = %d", got)
	}
	if got := median([]int64{4, 1, 3, 2}); got != 2 {
		t.Errorf("median of even count = %d, want the lower middle 2", got)
	}
	s := summarize([]sample{{Err: errors.New("x")}, {Stats: regtest.Stats{Head: 2}}})
	if s.Failed != 1 || s.Head != 2 || s.ok() {
		t.Errorf("summarize = %+v", s)
	}
}
