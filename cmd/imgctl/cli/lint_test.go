package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// windowsDockerfile writes a multi-OS Dockerfile whose Windows stage is
// FROM from (line 4) and returns its path.
func windowsDockerfile(t *testing.T, from string) string {
	t.Helper()
	df := filepath.Join(t.TempDir(), "Dockerfile")
	body := "ARG WINDOWS_BASE=mcr.microsoft.com/windows/nanoserver:ltsc2022\n" +
		"FROM --platform=$BUILDPLATFORM golang:1.26 AS build\n" +
		"RUN go build -o /out/app.exe .\n" +
		"FROM " + from + " AS final-windows\n" +
		"COPY --from=build /out/app.exe /app/app.exe\n" +
		"ENTRYPOINT [\"C:\\\\app\\\\app.exe\"]\n" +
		"FROM alpine AS final-linux\n" +
		"FROM final-${TARGETOS}\n"
	if err := os.WriteFile(df, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return df
}

// TestLintWindowsBaseRelease: a Windows base that cannot give the release
// being built is a finding with file:line (exit 1), found by its tag or,
// with several releases, by not using ${WINDOWS_BASE}; before this rule
// these passed lint and failed only after the solve.
func TestLintWindowsBaseRelease(t *testing.T) {
	for _, tc := range []struct {
		name, from string
		args       []string
		exit       int
		want       string // in the output, after "Dockerfile:"
	}{
		{"nanoserver:ltsc2025 for ltsc2022", "mcr.microsoft.com/windows/nanoserver:ltsc2025", []string{"--windows", "ltsc2022"}, 1,
			"4: [windows-base-release] stage \"final-windows\" is built FROM mcr.microsoft.com/windows/nanoserver:ltsc2025, whose tag names Windows build 26100 (ltsc2025)"},
		{"servercore/iis for ltsc2022", "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2025", []string{"--windows", "ltsc2022"}, 1,
			"4: [windows-base-release]"},
		{"hard-coded, two releases", "mcr.microsoft.com/windows/nanoserver:ltsc2022", []string{"--windows", "ltsc2022,ltsc2025"}, 1,
			"4: [windows-base-release] stage \"final-windows\" is built FROM mcr.microsoft.com/windows/nanoserver:ltsc2022, which does not use ${WINDOWS_BASE}"},
		{"hard-coded, its release", "mcr.microsoft.com/windows/nanoserver:ltsc2022", []string{"--windows", "ltsc2022"}, 0, ""},
		{"1809 for ltsc2019", "mcr.microsoft.com/windows/servercore:1809", []string{"--windows", "ltsc2019"}, 0, ""},
		{"${WINDOWS_BASE}, two releases", "${WINDOWS_BASE}", []string{"--windows", "ltsc2022,ltsc2025"}, 0, ""},
		{"--windows-base of another release", "${WINDOWS_BASE}", []string{"--windows", "ltsc2022,ltsc2025",
			"--windows-base", "ltsc2022=reg.example.com/nanoserver:10.0.26100.2894"}, 1, "4: [windows-base-release]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			df := windowsDockerfile(t, tc.from)
			out, errOut, code := run(t, append([]string{"lint", "-f", df, filepath.Dir(df)}, tc.args...)...)
			if code != tc.exit || !strings.Contains(out, df+":"+tc.want) {
				t.Errorf("exit %d, want %d with %q\n%s%s", code, tc.exit, tc.want, out, errOut)
			}
		})
	}
}

// TestLintLinkInWindowsStage: a COPY --link in the Windows final stage is
// an error finding at its line in text, JSON and SARIF (exit 1), and build
// stops on it before it dials the builder; the same --link in the Linux
// final stage is not a finding.
func TestLintLinkInWindowsStage(t *testing.T) {
	df := filepath.Join(t.TempDir(), "Dockerfile")
	body := "FROM --platform=$BUILDPLATFORM golang:1.26 AS build\n" +
		"RUN GOOS=windows go build -o /out/app.exe .\n" +
		"FROM mcr.microsoft.com/windows/nanoserver:ltsc2022 AS final-windows\n" +
		"COPY --link --from=build /out/app.exe /app/app.exe\n" +
		"FROM alpine AS final-linux\n" +
		"COPY --link --from=build /out/app.exe /app/app\n" +
		"FROM final-${TARGETOS}\n"
	if err := os.WriteFile(df, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"lint", "-f", df, "--windows", "ltsc2022", filepath.Dir(df)}
	out, errOut, code := run(t, args...)
	if want := df + ":4: [link-in-windows-stage] COPY --link in stage \"final-windows\""; code != ExitFailed || !strings.Contains(out, want) ||
		strings.Contains(out, ":6:") || !strings.Contains(out, `would not appear under C:\`) {
		t.Errorf("text: exit %d, want 1 with %q and no finding on line 6\n%s%s", code, want, out, errOut)
	}

	out, errOut, code = run(t, append(args, "-o", "json")...)
	var rep struct {
		Passed   bool `json:"passed"`
		Findings []struct {
			Rule, Severity, File string
			Line                 int
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != ExitFailed {
		t.Fatalf("json: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	if rep.Passed || len(rep.Findings) != 1 || rep.Findings[0].Rule != "link-in-windows-stage" ||
		rep.Findings[0].Severity != "error" || rep.Findings[0].Line != 4 || rep.Findings[0].File != df {
		t.Errorf("json: want one error finding link-in-windows-stage at %s:4\n%s", df, out)
	}

	out, errOut, code = run(t, append(args, "-o", "sarif")...)
	if code != ExitFailed {
		t.Fatalf("sarif: exit %d\n%s%s", code, out, errOut)
	}
	l := decodeSARIF(t, out, lintRuleIDs)
	if rs := l.Runs[0].Results; len(rs) != 1 || rs[0].RuleID != "link-in-windows-stage" || rs[0].Level != "error" ||
		rs[0].Locations[0].PhysicalLocation.Region.StartLine != 4 {
		t.Errorf("sarif: want one error result link-in-windows-stage at line 4\n%s", out)
	}
	// build's preflight reports it before it dials the builder.
	out, errOut, code = run(t, "build", "--builder", "unix:///nonexistent/buildkitd.sock", "-t", "127.0.0.1:1/app:x",
		"-f", df, "--windows", "ltsc2022", filepath.Dir(df))
	if want := df + ":4: [link-in-windows-stage]"; code != ExitFailed || !strings.Contains(out, want) || strings.Contains(errOut, "nonexistent") {
		t.Errorf("build: exit %d, want 1 with %q before dialing\n%s%s", code, want, out, errOut)
	}
}

// TestLintResolve: with --resolve, a base whose reference names no
// release is read from the registry (an image's config, an index's
// descriptors) and compared with the release; a registry error exits 2.
func TestLintResolve(t *testing.T) {
	t.Parallel()
	reg := regtest.New(t)
	base25 := regtest.Must(regtest.WindowsBaseImage(regtest.OSVersionLTSC2025))(t)
	nano := push(t, reg, "nanoserver:latest", base25)
	multi := push(t, reg, "multi:latest", regtest.Must(regtest.MultiOSIndex())(t))
	byDigest := reg.Host() + "/nanoserver@" + digestOf(t, base25)
	missing := reg.Host() + "/missing:latest"
	for _, tc := range []struct {
		name, from string
		args       []string
		exit       int
		want       string
	}{
		{"latest of another release", "${WINDOWS_BASE}", []string{"--windows", "ltsc2022", "--windows-base", "ltsc2022=" + nano, "--resolve"}, 1,
			"4: [windows-base-release] stage \"final-windows\" is built FROM " + nano + ", whose windows/amd64 os.version is " + regtest.OSVersionLTSC2025},
		{"latest, not resolved", "${WINDOWS_BASE}", []string{"--windows", "ltsc2022", "--windows-base", "ltsc2022=" + nano}, 0, ""},
		{"latest of its release", "${WINDOWS_BASE}", []string{"--windows", "ltsc2025", "--windows-base", "ltsc2025=" + nano, "--resolve"}, 0, ""},
		{"index with both releases", "${WINDOWS_BASE}", []string{"--windows", "ltsc2022,ltsc2025", "--windows-base-template", multi, "--resolve"}, 0, ""},
		{"digest of another release", byDigest, []string{"--windows", "ltsc2022", "--resolve"}, 1, "4: [windows-base-release]"},
		{"digest of its release", byDigest, []string{"--windows", "ltsc2025", "--resolve"}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			df := windowsDockerfile(t, tc.from)
			out, errOut, code := run(t, append([]string{"lint", "-f", df, filepath.Dir(df)}, tc.args...)...)
			if code != tc.exit || !strings.Contains(out, df+":"+tc.want) {
				t.Errorf("exit %d, want %d with %q\n%s%s", code, tc.exit, tc.want, out, errOut)
			}
		})
	}
	df := windowsDockerfile(t, "${WINDOWS_BASE}")
	out, errOut, code := run(t, "lint", "-f", df, "--windows", "ltsc2022", "--windows-base", "ltsc2022="+missing, "--resolve", "-o", "json", filepath.Dir(df))
	if code != ExitError || !strings.Contains(errOut, df+":4") || !strings.Contains(errOut, "missing") {
		t.Errorf("missing base: exit %d, want 2 naming the line and the base\n%s%s", code, out, errOut)
	}
}
