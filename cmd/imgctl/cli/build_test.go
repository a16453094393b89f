package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestBuildUsage: bad flags are usage errors (exit 2), found before any
// builder or registry is contacted.
func TestBuildUsage(t *testing.T) {
	hello := filepath.Join("..", "..", "..", "examples", "hello")
	for _, tc := range []struct {
		name     string
		args     []string
		contains string
	}{
		{"no tag", []string{hello}, "-t/--tag"},
		{"digest tag", []string{"-t", "reg.example.com/a@sha256:" + strings.Repeat("a", 64), hello}, "want a tag"},
		{"no context", []string{"-t", "localhost:1/a:1"}, "accepts 1 arg"},
		{"bad progress", []string{"-t", "localhost:1/a:1", "--progress", "fancy", hello}, "--progress"},
		{"bad release", []string{"-t", "localhost:1/a:1", "--windows", "ltsc2016", hello}, "ltsc2016"},
		{"bad windows base", []string{"-t", "localhost:1/a:1", "--windows", "ltsc2022", "--windows-base", "nope", hello}, "--windows-base"},
		{"base for unbuilt release", []string{"-t", "localhost:1/a:1", "--windows", "ltsc2022", "--windows-base", "ltsc2025=x", hello}, "ltsc2025"},
		{"bad platform", []string{"-t", "localhost:1/a:1", "--platform", "linux", hello}, "--platform"},
		{"bad secret", []string{"-t", "localhost:1/a:1", "--secret", "src=/x", hello}, `--secret "src=/x": id is required`},
		{"bad secret field", []string{"-t", "localhost:1/a:1", "--secret", "id=a,bogus=1", hello}, `--secret "id=a,bogus=1": unexpected key 'bogus'`},
		{"empty ssh", []string{"-t", "localhost:1/a:1", "--ssh", "", hello}, `--ssh "": empty value`},
		{"bad cache", []string{"-t", "localhost:1/a:1", "--cache-to", "mode=max", hello}, `--cache-to "mode=max": type required`},
		{"bad cache attribute", []string{"-t", "localhost:1/a:1", "--cache-from", "type=registry,novalue", hello}, `--cache-from "type=registry,novalue": invalid value novalue`},
		{"bad annotation", []string{"-t", "localhost:1/a:1", "--annotation", "novalue", hello}, "--annotation"},
		{"bad provenance", []string{"-t", "localhost:1/a:1", "--provenance", "mode=full", hello}, "--provenance"},
		{"bad provenance key", []string{"-t", "localhost:1/a:1", "--provenance=version=v0.2", hello}, "unknown key"},
		{"bad sbom generator", []string{"-t", "localhost:1/a:1", "--sbom=generator=Not/A/Ref", hello}, "--sbom"},
		{"tls on unix", []string{"-t", "localhost:1/a:1", "--builder", "unix:///x.sock", "--tlscacert", "ca.pem", "--no-verify", hello}, "tcp://"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := run(t, append([]string{"build"}, tc.args...)...)
			if code != ExitError || !strings.Contains(stderr, tc.contains) {
				t.Errorf("exit %d, want 2 with %q; stderr:\n%s", code, tc.contains, stderr)
			}
		})
	}
}

func TestLint(t *testing.T) {
	hello := filepath.Join("..", "..", "..", "examples", "hello")
	out, stderr, code := run(t, "lint", "--windows", "ltsc2022,ltsc2025", hello)
	if code != ExitOK || !strings.Contains(out, "0 finding(s)") {
		t.Errorf("hello: exit %d\n%s%s", code, out, stderr)
	}
	dir := t.TempDir()
	df := filepath.Join(dir, "Dockerfile")
	bad := "FROM mcr.microsoft.com/windows/nanoserver:ltsc2022\nRUN echo hi\nENTRYPOINT [\"C:\\app\\hello.exe\"]\n"
	if err := os.WriteFile(df, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code = run(t, "lint", "--platform", "windows/amd64", dir)
	for _, want := range []string{df + ":2: [run-in-windows-stage]", df + ":3: [invalid-exec-form]", "2 finding(s)"} {
		if code != ExitFailed || !strings.Contains(out, want) {
			t.Errorf("exit %d, want 1 with %q:\n%s", code, want, out)
		}
	}
	out, _, code = run(t, "lint", "-o", "json", "-f", df, "--platform", "windows/amd64", "--windows", "ltsc2022,ltsc2025")
	var rep struct {
		File     string `json:"file"`
		Passed   bool   `json:"passed"`
		Findings []struct {
			Rule     string `json:"rule"`
			Line     int    `json:"line"`
			Platform string `json:"platform"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != ExitFailed || rep.Passed || rep.File != df {
		t.Fatalf("json: exit %d, %v\n%s", code, err, out)
	}
	// The hard-coded base once for the build (two releases, no
	// ${WINDOWS_BASE}) and once for the ltsc2025 variant it cannot give;
	// one RUN finding per Windows variant; the exec-form finding once.
	var got []string
	for _, f := range rep.Findings {
		got = append(got, fmt.Sprintf("%d %s %s", f.Line, f.Rule, f.Platform))
	}
	if want := []string{
		"1 windows-base-release ",
		"1 windows-base-release windows/amd64:10.0.26100",
		"2 run-in-windows-stage windows/amd64:10.0.20348",
		"2 run-in-windows-stage windows/amd64:10.0.26100",
		"3 invalid-exec-form ",
	}; !slices.Equal(got, want) {
		t.Errorf("findings = %q\nwant %q", got, want)
	}
	if _, stderr, code := run(t, "lint", filepath.Join(dir, "missing")); code != ExitError || !strings.Contains(stderr, "Dockerfile") {
		t.Errorf("missing context: exit %d %s", code, stderr)
	}
}
