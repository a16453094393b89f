package lint

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/findings"
	"github.com/imgctl/imgctl/platform"
)

// preflightReleases lints dockerfile as imgctl build does for the Windows
// releases given: one Preflight per release, windows/amd64 with the
// release's build, WINDOWS_BASE set to bases[release] (default: nanoserver
// of that release), and the findings merged.
func preflightReleases(t *testing.T, dockerfile string, releases []string, bases map[string]string, resolve BaseResolver) ([]findings.Finding, error) {
	t.Helper()
	var all []findings.Finding
	for _, name := range releases {
		tg, err := platform.ParseTarget(name)
		if err != nil {
			t.Fatal(err)
		}
		base := bases[name]
		if base == "" {
			base = "mcr.microsoft.com/windows/nanoserver:" + name
		}
		opts := Options{
			Platforms:       []v1.Platform{{OS: "windows", Architecture: "amd64", OSVersion: fmt.Sprintf("10.0.%d", tg.Version.Build)}},
			BuildArgs:       map[string]string{WindowsBaseArg: base},
			WindowsReleases: len(releases),
			Resolve:         resolve,
		}
		fs, err := Preflight(strings.NewReader(dockerfile), "Dockerfile", opts)
		if err != nil {
			return nil, err
		}
		all = append(all, fs...)
	}
	return NewError(all).Findings, nil
}

// fromArg is a multi-OS Dockerfile whose Windows stage is FROM the given
// text.
func fromArg(from string) string {
	return `ARG WINDOWS_BASE=mcr.microsoft.com/windows/nanoserver:ltsc2022
ARG OTHER_BASE=mcr.microsoft.com/windows/nanoserver:ltsc2022
FROM --platform=$BUILDPLATFORM golang:1.26 AS build
RUN go build -o /out/app.exe .
FROM ` + from + ` AS final-windows
COPY --from=build /out/app.exe /app/app.exe
ENTRYPOINT ["C:\\app\\app.exe"]
FROM alpine AS final-linux
FROM final-${TARGETOS}
`
}

func TestWindowsBaseRelease(t *testing.T) {
	const (
		w2022 = "windows/amd64:10.0.20348"
		w2025 = "windows/amd64:10.0.26100"
		w2019 = "windows/amd64:10.0.17763"
	)
	for _, tc := range []struct {
		name     string
		df       string
		releases []string
		bases    map[string]string
		want     []want // platform "" is the several-releases finding
	}{
		{"nanoserver:ltsc2025 hard-coded, ltsc2022 built", fromArg("mcr.microsoft.com/windows/nanoserver:ltsc2025"),
			[]string{"ltsc2022"}, nil, []want{{RuleWindowsBaseRelease, 5, w2022, "final-windows"}}},
		{"servercore/iis prefixed tag", fromArg("mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2025"),
			[]string{"ltsc2022"}, nil, []want{{RuleWindowsBaseRelease, 5, w2022, "final-windows"}}},
		{"hard-coded base of the one release built", fromArg("mcr.microsoft.com/windows/nanoserver:ltsc2022"),
			[]string{"ltsc2022"}, nil, nil},
		{"hard-coded base, two releases", fromArg("mcr.microsoft.com/windows/nanoserver:ltsc2022"),
			[]string{"ltsc2022", "ltsc2025"}, nil, []want{
				{RuleWindowsBaseRelease, 5, "", "final-windows"},
				{RuleWindowsBaseRelease, 5, w2025, "final-windows"},
			}},
		{"another ARG does not count", fromArg("${OTHER_BASE}"),
			[]string{"ltsc2022", "ltsc2025"}, nil, []want{
				{RuleWindowsBaseRelease, 5, "", "final-windows"},
				{RuleWindowsBaseRelease, 5, w2025, "final-windows"},
			}},
		{"${WINDOWS_BASE}, two releases", fromArg("${WINDOWS_BASE}"), []string{"ltsc2022", "ltsc2025"}, nil, nil},
		{"$WINDOWS_BASE, three releases", fromArg("$WINDOWS_BASE"), []string{"ltsc2019", "ltsc2022", "ltsc2025"}, nil, nil},
		{"${WINDOWS_BASE:-default}", fromArg("${WINDOWS_BASE:-mcr.microsoft.com/windows/nanoserver:ltsc2022}"), []string{"ltsc2022", "ltsc2025"}, nil, nil},
		{"WINDOWS_BASE of another release", fromArg("${WINDOWS_BASE}"), []string{"ltsc2022", "ltsc2025"},
			map[string]string{"ltsc2022": "reg.example.com/nanoserver:ltsc2025"},
			[]want{{RuleWindowsBaseRelease, 5, w2022, "final-windows"}}},
		{"1809 is ltsc2019", fromArg("mcr.microsoft.com/windows/servercore:1809"), []string{"ltsc2019"}, nil, nil},
		{"20H2 is not ltsc2022", fromArg("mcr.microsoft.com/windows/servercore:20H2"),
			[]string{"ltsc2022"}, nil, []want{{RuleWindowsBaseRelease, 5, w2022, "final-windows"}}},
		{"23H2 is not ltsc2025", fromArg("mcr.microsoft.com/windows/servercore:23H2"),
			[]string{"ltsc2025"}, nil, []want{{RuleWindowsBaseRelease, 5, w2025, "final-windows"}}},
		{"full version of another build", fromArg("mcr.microsoft.com/windows/nanoserver:10.0.26100.2894"),
			[]string{"ltsc2019"}, nil, []want{{RuleWindowsBaseRelease, 5, w2019, "final-windows"}}},
		{"dotnet tag of the release", fromArg("mcr.microsoft.com/dotnet/runtime:8.0-nanoserver-ltsc2022"), []string{"ltsc2022"}, nil, nil},
		{"latest gives no hint", fromArg("mcr.microsoft.com/windows/nanoserver:latest"), []string{"ltsc2022"}, nil, nil},
		{"stage chain: only the first FROM", `ARG WINDOWS_BASE
FROM ${WINDOWS_BASE} AS base
COPY a.txt /a.txt
FROM base AS final
COPY b.txt /b.txt
`, []string{"ltsc2022", "ltsc2025"}, nil, nil},
		{"COPY --from a hard-coded Windows stage", `ARG WINDOWS_BASE
FROM mcr.microsoft.com/windows/servercore:ltsc2022 AS core
FROM ${WINDOWS_BASE}
COPY --from=core /Windows/System32/x.dll /Windows/System32/x.dll
`, []string{"ltsc2022", "ltsc2025"}, nil, []want{
			{RuleWindowsBaseRelease, 2, "", "core"},
			{RuleWindowsBaseRelease, 2, w2025, "core"},
		}},
		{"scratch", "FROM scratch\nCOPY a /a\n", []string{"ltsc2022", "ltsc2025"}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, err := preflightReleases(t, tc.df, tc.releases, tc.bases, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []want
			for _, f := range fs {
				if f.Rule != RuleWindowsBaseRelease {
					continue
				}
				if f.Severity != findings.Error || !strings.Contains(f.Message, "FROM ") {
					t.Errorf("incomplete finding %+v", f)
				}
				got = append(got, want{f.Rule, f.Line, f.Platform, f.Stage})
			}
			if !slices.Equal(tc.want, got) {
				t.Errorf("findings = %+v\nwant %+v\nall: %v", got, tc.want, fs)
			}
		})
	}
}

// TestWindowsBaseReleaseNotWindows: Linux builds and plain windows/amd64
// (no release) are not judged, whatever the tag says.
func TestWindowsBaseReleaseNotWindows(t *testing.T) {
	df := fromArg("mcr.microsoft.com/windows/nanoserver:ltsc2025")
	for _, p := range []v1.Platform{linuxAMD64, windowsAMD64} {
		findings, err := Preflight(strings.NewReader(df), "Dockerfile", Options{Platforms: []v1.Platform{p}, WindowsReleases: 2,
			Resolve: func(string) ([]v1.Platform, error) { return nil, errors.New("must not be called") }})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range findings {
			if f.Rule == RuleWindowsBaseRelease && f.Platform != "" {
				t.Errorf("%s: %v", p, f)
			}
		}
	}
}

// TestWindowsBaseResolve: a base whose reference names no release is
// judged by the platforms the resolver reads; resolver errors come back
// with the file and line.
func TestWindowsBaseResolve(t *testing.T) {
	offers := map[string][]v1.Platform{
		"reg.example.com/nano:latest": {{OS: "windows", Architecture: "amd64", OSVersion: "10.0.26100.2894"}},
		"reg.example.com/multi": {
			{OS: "linux", Architecture: "amd64"},
			{OS: "windows", Architecture: "amd64", OSVersion: "10.0.26100.2894"},
			{OS: "windows", Architecture: "amd64", OSVersion: "10.0.20348.3091"},
		},
		"reg.example.com/nano@sha256:" + strings.Repeat("a", 64): {{OS: "windows", Architecture: "amd64", OSVersion: "10.0.20348.3091"}},
		"reg.example.com/hostprocess:latest":                     {{OS: "windows", Architecture: "amd64"}},
		"reg.example.com/linux:latest":                           {{OS: "linux", Architecture: "amd64"}},
	}
	var asked []string
	resolve := func(ref string) ([]v1.Platform, error) {
		asked = append(asked, ref)
		p, ok := offers[ref]
		if !ok {
			return nil, errors.New("registry says no")
		}
		return p, nil
	}
	for _, tc := range []struct {
		base    string
		finding bool
		message string
	}{
		{"reg.example.com/nano:latest", true, "os.version is 10.0.26100.2894"},
		{"reg.example.com/multi", false, ""},
		{"reg.example.com/nano@sha256:" + strings.Repeat("a", 64), false, ""},
		{"reg.example.com/hostprocess:latest", true, "no os.version"},
		{"reg.example.com/linux:latest", true, "has no windows/amd64 variant"},
	} {
		t.Run(tc.base, func(t *testing.T) {
			findings, err := preflightReleases(t, fromArg("${WINDOWS_BASE}"), []string{"ltsc2022"}, map[string]string{"ltsc2022": tc.base}, resolve)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(findings) == 1 && findings[0].Rule == RuleWindowsBaseRelease; got != tc.finding {
				t.Fatalf("findings = %v, want one: %t", findings, tc.finding)
			}
			if tc.finding && (!strings.Contains(findings[0].Message, tc.message) || findings[0].Line != 5 || findings[0].Platform != "windows/amd64:10.0.20348") {
				t.Errorf("finding = %v, want %q", findings[0], tc.message)
			}
		})
	}
	asked = nil
	if _, err := preflightReleases(t, fromArg("${WINDOWS_BASE}"), []string{"ltsc2022"}, nil, resolve); err != nil || len(asked) != 0 {
		t.Errorf("a base whose tag names the release was resolved: %v %v", asked, err)
	}
	_, err := preflightReleases(t, fromArg("${WINDOWS_BASE}"), []string{"ltsc2022"}, map[string]string{"ltsc2022": "reg.example.com/gone:latest"}, resolve)
	if err == nil || !strings.Contains(err.Error(), "Dockerfile:5") || !strings.Contains(err.Error(), "registry says no") {
		t.Errorf("resolver error = %v, want it with Dockerfile:5", err)
	}
}
