package variant

import (
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/containerd/platforms"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/platform"
)

// formatPlatforms writes platforms as BuildKit's platform attribute reads
// them (package build's own), windows(10.0.20348)/amd64 with an os.version.
func formatPlatforms(ps []v1.Platform) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = platforms.FormatAll(platforms.Normalize(platform.ToSpec(p)))
	}
	return strings.Join(s, ",")
}

// plan is what a test expects of one variant.
type plan struct {
	name, platforms, base string
}

func TestPlanVariants(t *testing.T) {
	win2022 := v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.20348.4297"}
	for _, tc := range []struct {
		name string
		o    VariantOptions
		want []plan
	}{
		{"defaults", VariantOptions{}, []plan{{"linux", "linux/amd64,linux/arm64", ""}, {"windows", "windows/amd64", ""}}},
		{"two releases with bases", VariantOptions{
			Windows:      []string{"ltsc2022", "LTSC2025"},
			WindowsBases: map[string]string{"ltsc2022": "r/ns:2022", "ltsc2025": "r/ns:2025"},
		}, []plan{
			{"linux", "linux/amd64,linux/arm64", ""},
			{"ltsc2022", "windows(10.0.20348)/amd64", "r/ns:2022"},
			{"ltsc2025", "windows(10.0.26100)/amd64", "r/ns:2025"},
		}},
		{"template", VariantOptions{Platforms: []v1.Platform{{OS: "windows", Architecture: "amd64"}}, Windows: []string{"ltsc2025"}, WindowsBaseTemplate: "reg/nano:{ltsc}-amd64"},
			[]plan{{"ltsc2025", "windows(10.0.26100)/amd64", "reg/nano:ltsc2025-amd64"}}},
		{"one release keeps --build-arg WINDOWS_BASE", VariantOptions{Windows: []string{"ltsc2022"}, BuildArgs: map[string]string{"WINDOWS_BASE": "mine:1"}},
			[]plan{{"linux", "linux/amd64,linux/arm64", ""}, {"ltsc2022", "windows(10.0.20348)/amd64", "mine:1"}}},
		{"default template", VariantOptions{Windows: []string{"ltsc2022", "ltsc2025"}, BuildArgs: map[string]string{"WINDOWS_BASE": "mine:1"}}, []plan{
			{"linux", "linux/amd64,linux/arm64", ""},
			{"ltsc2022", "windows(10.0.20348)/amd64", "mcr.microsoft.com/windows/nanoserver:ltsc2022"},
			{"ltsc2025", "windows(10.0.26100)/amd64", "mcr.microsoft.com/windows/nanoserver:ltsc2025"},
		}},
		{"os.version platform selects the release", VariantOptions{Platforms: []v1.Platform{win2022}},
			[]plan{{"ltsc2022", "windows(10.0.20348)/amd64", "mcr.microsoft.com/windows/nanoserver:ltsc2022"}}},
		{"linux only, duplicates merged", VariantOptions{Platforms: []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "amd64"}}},
			[]plan{{"linux", "linux/amd64", ""}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs, err := PlanVariants(tc.o)
			if err != nil {
				t.Fatal(err)
			}
			var got []plan
			for _, v := range vs {
				base := ""
				if v.IsWindows() {
					base = v.BuildArgs[WindowsBaseArg]
				}
				got = append(got, plan{v.Name, formatPlatforms(v.Platforms), base})
				if v.IsWindows() != (v.Name != "linux") {
					t.Errorf("%s: IsWindows = %t", v.Name, v.IsWindows())
				}
				if v.Name == "linux" && !maps.Equal(v.BuildArgs, tc.o.BuildArgs) {
					t.Errorf("linux build args = %v", v.BuildArgs)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("variants = %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("variant %d = %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestPlanVariantsErrors(t *testing.T) {
	linux := []v1.Platform{{OS: "linux", Architecture: "amd64"}}
	for name, o := range map[string]VariantOptions{
		"unknown release":        {Windows: []string{"ltsc2016"}},
		"base for unbuilt":       {Windows: []string{"ltsc2022"}, WindowsBases: map[string]string{"ltsc2025": "x"}},
		"--windows without win":  {Platforms: linux, Windows: []string{"ltsc2022"}},
		"non-LTSC os.version":    {Platforms: []v1.Platform{{OS: "windows", Architecture: "amd64", OSVersion: "10.0.22631.1"}}},
		"two windows, no --wind": {Platforms: []v1.Platform{{OS: "windows", Architecture: "amd64"}, {OS: "windows", Architecture: "arm64"}}},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := PlanVariants(o); !errors.Is(err, ErrInvalidOptions) {
				t.Errorf("err = %v, want ErrInvalidOptions", err)
			}
		})
	}
}

func TestWindowsPlatform(t *testing.T) {
	p := WindowsPlatform(platform.Releases[2])
	if got := formatPlatforms([]v1.Platform{p}); got != "windows(10.0.26100)/amd64" {
		t.Errorf("WindowsPlatform(ltsc2025) formats as %q", got)
	}
}
