package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moby/buildkit/client"
	"github.com/moby/buildkit/exporter/containerimage/exptypes"
	"github.com/tonistiigi/fsutil"

	"github.com/imgctl/imgctl/internal/testing/buildtest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/snapshot"
	"github.com/imgctl/imgctl/verify"
)

// TestVerifyLayersBuildKitLink solves a Windows Dockerfile on a real
// buildkitd directly (as buildctl would: imgctl build's lint refuses COPY
// --link in a Windows stage), once with COPY and once with COPY --link, and
// pushes each with the base annotations imgctl build sets. verify --layers
// reads the one stage layer of each: BuildKit's COPY layer is in the
// Windows layout, its COPY --link layer is not (app/app.exe), which is
// windows-layer-layout.
func TestVerifyLayersBuildKitLink(t *testing.T) {
	reg := regtest.New(t)
	nano := regtest.Must(buildtest.NanoserverLike(regtest.OSVersionLTSC2025))(t)
	baseRef, baseDigest, err := reg.PushTag("base/nanoserver:ltsc2025", nano)
	if err != nil {
		t.Fatal(err)
	}
	d := buildtest.New(t, buildtest.Options{InsecureRegistries: []string{reg.Host()}})
	ctx := context.Background()
	c, err := d.Client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	for _, tc := range []struct {
		name, copy string
		layout     bool
	}{{"copy", "COPY", true}, {"link", "COPY --link", false}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			df := "FROM " + baseRef.String() + "\n" + tc.copy + " app.exe /app/app.exe\n"
			for f, body := range map[string]string{"Dockerfile": df, "app.exe": "MZ app"} {
				if err := os.WriteFile(filepath.Join(dir, f), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			fs, err := fsutil.NewFS(dir)
			if err != nil {
				t.Fatal(err)
			}
			tag := reg.Host() + "/app:" + tc.name
			_, err = c.Solve(ctx, nil, client.SolveOpt{
				Frontend:      "dockerfile.v0",
				FrontendAttrs: map[string]string{"platform": "windows/amd64"},
				LocalMounts:   map[string]fsutil.FS{"context": fs, "dockerfile": fs},
				Exports: []client.ExportEntry{{Type: client.ExporterImage, Attrs: map[string]string{
					string(exptypes.OptKeyName):                                        tag,
					string(exptypes.OptKeyPush):                                        "true",
					string(exptypes.OptKeyOCITypes):                                    "true",
					string(exptypes.OptKeyInsecure):                                    "true",
					exptypes.AnnotationManifestKey(nil, snapshot.AnnotationBaseName):   baseRef.String(),
					exptypes.AnnotationManifestKey(nil, snapshot.AnnotationBaseDigest): baseDigest.String(),
				}}},
			}, nil)
			if err != nil {
				t.Fatalf("solve: %v\n%s", err, d.LogTail(30))
			}
			// A single Windows manifest: --hostprocess keeps not-an-index a
			// warning, so that the layout is the only possible error.
			out, errOut, code := run(t, "verify", tag, "--layers", "--hostprocess", "--windows", "ltsc2025", "-o", "json")
			r := decodeReport(t, out)
			layout := r.severity(verify.RuleWindowsLayerLayout)
			if r.Layers == nil || r.Layers.Read != 1 || r.Layers.Bytes == 0 {
				t.Errorf("layers %+v, want the one stage layer read\n%s", r.Layers, out)
			}
			if tc.layout && (code != ExitOK || layout != "") {
				t.Errorf("COPY: exit %d, layout finding %q, want 0 and none\n%s%s", code, layout, out, errOut)
			}
			if !tc.layout && (code != ExitFailed || layout != "error" || !strings.Contains(out, "app/app.exe")) {
				t.Errorf("COPY --link: exit %d, want 1 with an error windows-layer-layout naming app/app.exe\n%s%s", code, out, errOut)
			}
		})
	}
}
