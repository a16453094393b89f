package cli

import (
	"strconv"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/snapshot"
	"github.com/imgctl/imgctl/verify"
)

// stageImage is base with one stage layer on top, annotated with ann as
// imgctl build annotates its images (nil for no annotations).
func stageImage(t *testing.T, base v1.Image, l v1.Layer, ann map[string]string) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(base, l)
	if err != nil {
		t.Fatal(err)
	}
	if ann != nil {
		img = mutate.Annotations(img, ann).(v1.Image)
	}
	return img
}

// TestVerifyLayers: verify --layers reads exactly the stage layers of each
// Windows image (never a base layer: its blob is not even requested) and
// judges every entry: BuildKit's layout passes, gzip or zstd or Docker's
// media type; a --link layer (app/app.exe) and a whiteout outside Files/
// fail with windows-layer-layout (exit 1) naming the entries; an image
// without base annotations is not read and gets layers-unchecked.
func TestVerifyLayers(t *testing.T) {
	reg := regtest.New(t)
	base := regtest.Must(regtest.WindowsBaseImage(regtest.OSVersionLTSC2025))(t)
	base22 := regtest.Must(regtest.WindowsBaseImage(regtest.OSVersionLTSC2022))(t)
	baseRef, baseDigest, err := reg.PushTag("base/nanoserver:ltsc2025", base)
	if err != nil {
		t.Fatal(err)
	}
	_, baseIndex, err := reg.PushTag("base/nanoserver:multi", index(t, regtest.Entry{Image: base22}, regtest.Entry{Image: base}))
	if err != nil {
		t.Fatal(err)
	}
	baseLayers := regtest.Must(base.Layers())(t)
	baseLayer := regtest.Must(baseLayers[0].Digest())(t)
	ann := map[string]string{snapshot.AnnotationBaseName: baseRef.String(), snapshot.AnnotationBaseDigest: baseDigest.String()}
	annIndex := map[string]string{snapshot.AnnotationBaseName: baseRef.Context().Tag("multi").String(), snapshot.AnnotationBaseDigest: baseIndex.String()}

	buildkit := []string{"Files/app/", "Files/app/app.exe"}
	for i, tc := range []struct {
		name  string
		mt    types.MediaType
		win   bool
		names []string
		ann   map[string]string
		code  int
		rule  string // the finding expected, "" for none
		bad   string // in the finding's message
		read  int
	}{
		{"buildkit layout, gzip", types.OCILayer, true, buildkit, ann, 0, "", "", 1},
		{"buildkit layout, zstd", types.OCILayerZStd, true, buildkit, ann, 0, "", "", 1},
		{"buildkit layout, docker media type", types.DockerLayer, true, buildkit, ann, 0, "", "", 1},
		{"base by index digest", types.OCILayer, true, buildkit, annIndex, 0, "", "", 1},
		{"whiteouts under Files/", types.OCILayer, true, []string{"Files/app/", "Files/app/.wh..wh..opq", "Files/app/.wh.old.exe"}, ann, 0, "", "", 1},
		{"--link layer, gzip", types.OCILayer, false, []string{"app/", "app/app.exe"}, ann, 1, verify.RuleWindowsLayerLayout, "2 of 2 entries outside the Windows layout (app/, app/app.exe)", 1},
		{"--link layer, zstd", types.OCILayerZStd, false, []string{"app/app.exe"}, ann, 1, verify.RuleWindowsLayerLayout, "(app/app.exe)", 1},
		{"whiteout outside Files/", types.OCILayer, true, []string{"Files/app/", "Hives/.wh.Software_Delta", ".wh.app"}, ann, 1, verify.RuleWindowsLayerLayout, "2 of 5 entries outside the Windows layout (Hives/.wh.Software_Delta, .wh.app)", 1},
		{"many bad entries are capped", types.OCILayer, false, []string{"a", "b", "c", "d", "e", "f", "g"}, ann, 1, verify.RuleWindowsLayerLayout, "(a, b, c, d, e and 2 more)", 1},
		{"no base annotation", types.OCILayer, false, []string{"app/app.exe"}, nil, 0, verify.RuleLayersUnchecked, "no " + snapshot.AnnotationBaseName, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := regtest.Must(regtest.StageLayer(tc.mt, tc.win, tc.names...))(t)
			img := stageImage(t, base, l, tc.ann)
			ref := push(t, reg, "app:"+itoa(i), index(t, regtest.Entry{Image: img}, regtest.Entry{Image: regtest.Must(regtest.LinuxImage("amd64"))(t)}))
			stage := regtest.Must(l.Digest())(t)
			var log requestLog
			uninstall := log.install(reg)
			out, errOut, code := run(t, "verify", ref, "--layers", "--windows", "ltsc2025", "-o", "json")
			uninstall()
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, out, errOut)
			}
			r := decodeReport(t, out)
			var got []string
			for _, f := range r.Findings {
				got = append(got, f.Rule)
				if f.Rule == tc.rule && (!strings.Contains(f.Message, tc.bad) || f.Platform != "windows/amd64:"+regtest.OSVersionLTSC2025) {
					t.Errorf("%s: message %q (platform %s), want it to name %q", f.Rule, f.Message, f.Platform, tc.bad)
				}
				if f.Rule == verify.RuleWindowsLayerLayout && !strings.Contains(f.Message, stage.String()) {
					t.Errorf("finding does not name the layer %s: %s", stage, f.Message)
				}
			}
			if want := []string{tc.rule}; (tc.rule == "" && len(got) != 0) || (tc.rule != "" && strings.Join(got, ",") != strings.Join(want, ",")) {
				t.Errorf("findings %q, want %q\n%s", got, tc.rule, out)
			}
			size := regtest.Must(l.Size())(t)
			if r.Layers == nil || r.Layers.Read != tc.read || (tc.read == 1 && r.Layers.Bytes != size) || (tc.read == 0 && r.Layers.Bytes != 0) {
				t.Errorf("layers %+v, want %d read of %d bytes", r.Layers, tc.read, size)
			}
			if n := log.count("GET /v2/app/blobs/"+stage.String(), true); n != tc.read {
				t.Errorf("stage layer fetched %d times, want %d\n%s", n, tc.read, log.String())
			}
			if strings.Contains(log.String(), "/blobs/"+baseLayer.String()) {
				t.Errorf("the base layer %s was requested:\n%s", baseLayer, log.String())
			}
		})
	}

	// Text says what was read; plain verify reads no layer and says nothing.
	l := regtest.Must(regtest.StageLayer(types.OCILayer, false, "app/app.exe"))(t)
	ref := push(t, reg, "app:text", index(t, regtest.Entry{Image: stageImage(t, base, l, ann)}))
	out, _, code := run(t, "verify", ref, "--layers", "--windows", "ltsc2025")
	if size := regtest.Must(l.Size())(t); code != ExitFailed || !strings.Contains(out, "error   windows-layer-layout windows/amd64:") ||
		!strings.Contains(out, "layers: read 1 layer(s), "+strconv.FormatInt(size, 10)+" bytes") {
		t.Errorf("text: exit %d\n%s", code, out)
	}
	var log requestLog
	uninstall := log.install(reg)
	out, _, code = run(t, "verify", ref, "--windows", "ltsc2025", "-o", "json")
	uninstall()
	if r := decodeReport(t, out); code != ExitOK || r.Layers != nil || log.count("GET /v2/app/blobs/"+regtest.Must(l.Digest())(t).String(), true) != 0 {
		t.Errorf("plain verify: exit %d, want 0, no layers field and no layer read\n%s\n%s", code, out, log.String())
	}
}

// TestVerifyLayersSkipsForeign: a foreign (non-distributable) layer among
// an image's own layers is never read, even when --link-shaped: nodes fetch
// it from its urls, and the registry may not hold it.
func TestVerifyLayersSkipsForeign(t *testing.T) {
	reg := regtest.New(t)
	base := regtest.Must(regtest.WindowsBaseImage(regtest.OSVersionLTSC2025, regtest.WithDockerMediaTypes()))(t)
	baseRef, baseDigest, err := reg.PushTag("base/nanoserver:ltsc2025", base)
	if err != nil {
		t.Fatal(err)
	}
	l := regtest.Must(regtest.StageLayer(types.DockerForeignLayer, false, "app/app.exe"))(t)
	d := regtest.Must(l.Digest())(t)
	img, err := mutate.Append(base, mutate.Addendum{Layer: l, MediaType: types.DockerForeignLayer, URLs: []string{regtest.ForeignLayerURLPrefix + d.String()}})
	if err != nil {
		t.Fatal(err)
	}
	img = mutate.Annotations(img, map[string]string{snapshot.AnnotationBaseName: baseRef.String(), snapshot.AnnotationBaseDigest: baseDigest.String()}).(v1.Image)
	ref := push(t, reg, "app:foreign", index(t, regtest.Entry{Image: img}))
	var log requestLog
	uninstall := log.install(reg)
	out, errOut, code := run(t, "verify", ref, "--layers", "--windows", "ltsc2025", "-o", "json")
	uninstall()
	r := decodeReport(t, out)
	if code != ExitOK || r.severity(verify.RuleWindowsLayerLayout) != "" || r.Layers == nil || r.Layers.Read != 0 || r.Layers.Bytes != 0 ||
		strings.Contains(log.String(), "/blobs/"+d.String()) {
		t.Errorf("exit %d, layers %+v: want 0 and the foreign layer unread\n%s%s\n%s", code, r.Layers, out, errOut, log.String())
	}
}
