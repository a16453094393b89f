package build_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	spdx "github.com/spdx/tools-golang/spdx/v2/v2_3"

	"github.com/imgctl/imgctl/build"
	"github.com/imgctl/imgctl/internal/spdxos"
	"github.com/imgctl/imgctl/internal/testing/buildtest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// syftScanner is BuildKit's scanner (docker/buildkit-syft-scanner, Syft
// as a library) built from internal/tools/syftscanner by make
// sbom-measure: $IMGCTL_SYFT_SCANNER, else bin/syft-scanner.
func syftScanner(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("IMGCTL_SYFT_SCANNER"); p != "" {
		return p
	}
	root, err := buildtest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, "bin", "syft-scanner")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("no %s: make sbom-measure builds BuildKit's scanner and runs this measurement", p)
	}
	return p
}

// contentBase pushes a servercore-shaped base (buildtest.WindowsContentLayer
// over the base layer) as an index at repoTag.
func contentBase(t *testing.T, reg *regtest.Registry, repoTag, osVersion string) sbomBase {
	t.Helper()
	img := regtest.Must(regtest.WindowsBaseImage(osVersion, regtest.WithSeed(t.Name()+repoTag)))(t)
	img = regtest.Must(mutate.AppendLayers(img, regtest.Must(buildtest.WindowsContentLayer(osVersion))(t)))(t)
	idx := mutate.AppendManifests(empty.Index, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{
		Platform: &v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: osVersion}}})
	if _, err := regtest.Push(reg.MustRef(t, repoTag), idx); err != nil {
		t.Fatal(err)
	}
	b := sbomBase{ref: reg.Host() + "/" + repoTag, osVersion: osVersion, index: regtest.Must(idx.Digest())(t)}
	for _, l := range regtest.Must(img.Manifest())(t).Layers {
		b.layers = append(b.layers, l.Digest)
	}
	return b
}

// finding is one package a scanner reported.
type finding struct {
	Name, Version, Purpose, Source string
	Refs                           []string
}

func findingsOf(doc *spdx.Document) []finding {
	var out []finding
	for _, p := range doc.Packages {
		if string(p.PackageSPDXIdentifier) == strings.TrimPrefix(spdxos.OSID, "SPDXRef-") ||
			string(p.PackageSPDXIdentifier) == strings.TrimPrefix(spdxos.BaseID, "SPDXRef-") || strings.HasPrefix(string(p.PackageSPDXIdentifier), "DocumentRoot-") {
			continue
		}
		f := finding{Name: p.PackageName, Version: p.PackageVersion, Purpose: p.PrimaryPackagePurpose, Source: p.PackageSourceInfo}
		for _, r := range p.PackageExternalReferences {
			f.Refs = append(f.Refs, r.Locator)
		}
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b finding) int { return strings.Compare(a.Source+a.Name, b.Source+b.Name) })
	return out
}

// TestSBOMScannerMeasurement runs BuildKit's scanner (Syft) on Windows
// variants whose bases have servercore's content shapes, on BuildKit's
// plain path and with --sbom base=reference, and reports what it found
// (docs/sbom-windows.md records a run). On the plain path the scanner
// reports the base's PE files and .NET assemblies as packages; with
// base=reference it sees none of them, the builder fetches no base layer,
// and both SBOMs carry the OS component and the base ancestor.
func TestSBOMScannerMeasurement(t *testing.T) {
	bin := syftScanner(t)
	gets := &blobGets{gets: map[string]int{}}
	reg := regtest.New(t, regtest.WithMiddleware(gets.middleware))
	bases := map[string]sbomBase{
		"ltsc2022": contentBase(t, reg, "windows/servercore:ltsc2022", regtest.OSVersionLTSC2022),
		"ltsc2025": contentBase(t, reg, "windows/servercore:ltsc2025", regtest.OSVersionLTSC2025),
	}
	scanner, err := buildtest.PushScannerBinary(reg.Host()+"/tools/syft-scanner:1", bin)
	if err != nil {
		t.Fatal(err)
	}
	dir := graftContext(t, sbomDockerfile)
	daemon := buildtest.New(t, buildtest.Options{InsecureRegistries: []string{reg.Host()}})
	report := map[string]map[string][]finding{}
	for _, mode := range []struct {
		name string
		sb   build.SBOM
	}{{"plain", build.SBOM{}}, {"reference", build.SBOM{BaseReference: true}}} {
		gets.take()
		tag := reg.Host() + "/app/measure:" + mode.name
		sbomBuild(t, daemon, tag, dir, scanner, bases, mode.sb)
		fetched := 0
		got := gets.take()
		for _, b := range bases {
			for _, l := range b.layers {
				fetched += got[l.String()]
			}
		}
		ii, im := indexAt(t, tag)
		report[mode.name] = map[string][]finding{}
		for _, d := range im.Manifests {
			if d.Platform == nil || d.Platform.OS != "windows" {
				continue
			}
			doc := sbomOf(t, ii, im, d)
			base := bases[platformRelease(d.Platform.OSVersion)]
			cpe := map[string]string{regtest.OSVersionLTSC2022: "windows_server_2022", regtest.OSVersionLTSC2025: "windows_server_2025"}[d.Platform.OSVersion]
			checkWindowsOS(t, doc, base, "Windows Server Core", cpe)
			fs := findingsOf(doc)
			report[mode.name][d.Platform.OSVersion] = fs
			fromBase := 0
			for _, f := range fs {
				if !strings.Contains(f.Source, "/app/") && !strings.Contains(f.Source, "app-copy.exe") {
					fromBase++
				}
				t.Logf("%s %s: %s %s (%s) %s %v", mode.name, d.Platform.OSVersion, f.Name, f.Version, f.Purpose, f.Source, f.Refs)
			}
			for _, f := range doc.Files {
				sum := ""
				for _, c := range f.Checksums {
					if c.Algorithm == "SHA256" {
						sum = c.Value
					}
				}
				t.Logf("%s %s: file %s sha256 %q", mode.name, d.Platform.OSVersion, f.FileName, sum)
			}
			t.Logf("%s %s: %d packages, %d from the base, %d files; BuildKit fetched base layers %d times",
				mode.name, d.Platform.OSVersion, len(fs), fromBase, len(doc.Files), fetched)
			switch {
			case mode.name == "plain" && fromBase == 0:
				t.Errorf("plain path: the scanner reported nothing from the base")
			case mode.name == "reference" && (fromBase != 0 || fetched != 0):
				t.Errorf("base=reference: %d packages from the base, base layers fetched %d times; want none", fromBase, fetched)
			}
			if mode.name == "reference" {
				var names []string
				for _, f := range doc.Files {
					names = append(names, strings.TrimPrefix(f.FileName, "/"))
				}
				slices.Sort(names)
				if !slices.Equal(names, []string{"Windows/System32/app-copy.exe", "app/app.exe"}) {
					t.Errorf("base=reference: the SBOM lists the files %v, want the stage's only", names)
				}
			}
		}
	}
	if out := os.Getenv("IMGCTL_SBOM_MEASURE_OUT"); out != "" {
		dt, err := json.MarshalIndent(report, "", "  ")
		if err == nil {
			err = os.WriteFile(out, dt, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(os.Stderr, "measurement written to", out)
	}
}
