package lint

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/findings"
)

var (
	linuxAMD64   = v1.Platform{OS: "linux", Architecture: "amd64"}
	linuxARM64   = v1.Platform{OS: "linux", Architecture: "arm64"}
	windowsAMD64 = v1.Platform{OS: "windows", Architecture: "amd64"}
	allPlatforms = []v1.Platform{linuxAMD64, linuxARM64, windowsAMD64}
)

// want is the part of a Finding a test case pins down.
type want struct {
	Rule     string
	Line     int
	Platform string
	Stage    string
}

func TestPreflight(t *testing.T) {
	hello, err := os.ReadFile("../examples/hello/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		dockerfile string
		opts       Options
		want       []want
	}{{
		name:       "examples/hello passes",
		dockerfile: string(hello),
		opts:       Options{Platforms: allPlatforms},
	}, {
		name:       "examples/hello with a syntax line passes",
		dockerfile: "# syntax=docker/dockerfile:1\n" + string(hello),
		opts:       Options{Platforms: allPlatforms},
	}, {
		name: "RUN in final-windows",
		dockerfile: `ARG WINDOWS_BASE=mcr.microsoft.com/windows/nanoserver:ltsc2022
FROM --platform=$BUILDPLATFORM golang:1.26 AS build
RUN go build -o /out/hello.exe .
FROM ${WINDOWS_BASE} AS final-windows
COPY --from=build /out/hello.exe /app/hello.exe
RUN mkdir C:\data
ENTRYPOINT ["C:\\app\\hello.exe"]
FROM alpine AS final-linux
FROM final-${TARGETOS}
`,
		opts: Options{Platforms: allPlatforms},
		want: []want{{RuleRunInWindowsStage, 6, "windows/amd64", "final-windows"}},
	}, {
		name: "RUN in a BUILDPLATFORM stage feeding windows passes",
		dockerfile: `FROM --platform=$BUILDPLATFORM golang:1.26 AS build
RUN GOOS=windows go build -o /out/hello.exe .
FROM mcr.microsoft.com/windows/nanoserver:ltsc2022
COPY --from=build /out/hello.exe /hello.exe
ENTRYPOINT ["C:\\hello.exe"]
`,
		opts: Options{Platforms: []v1.Platform{windowsAMD64}},
	}, {
		name: "invalid JSON escape in ENTRYPOINT",
		dockerfile: `FROM mcr.microsoft.com/windows/nanoserver:ltsc2022
COPY hello.exe /app/hello.exe
ENTRYPOINT ["C:\app\hello.exe"]
`,
		opts: Options{Platforms: []v1.Platform{windowsAMD64}},
		want: []want{{RuleInvalidExecForm, 3, "", "stage-0"}},
	}, {
		name: "invalid exec form is reported for linux only builds too",
		dockerfile: `FROM alpine
CMD ['/bin/echo', 'hi']
SHELL ["/bin/sh" "-c"]
RUN ["/bin/echo", "C:\x"]
RUN [ -f /etc/os-release ] && echo ok
RUN [ "$HOME" = /root ]
`,
		want: []want{{RuleInvalidExecForm, 2, "", "stage-0"}, {RuleInvalidExecForm, 3, "", "stage-0"}, {RuleInvalidExecForm, 4, "", "stage-0"}},
	}, {
		name: "escaped backslashes are valid exec form",
		dockerfile: `FROM mcr.microsoft.com/windows/nanoserver:ltsc2022
ENTRYPOINT ["C:\\app\\hello.exe"]
CMD ["--port", "8080"]
`,
		opts: Options{Platforms: []v1.Platform{windowsAMD64}},
	}, {
		name: "shell form ENTRYPOINT and CMD in a windows stage",
		dockerfile: `FROM mcr.microsoft.com/windows/nanoserver:ltsc2022
ENTRYPOINT C:\app\hello.exe
CMD C:\app\hello.exe -port 8080
`,
		opts: Options{Platforms: allPlatforms},
		want: []want{
			{RuleShellFormEntrypoint, 2, "windows/amd64", "stage-0"},
			{RuleShellFormEntrypoint, 3, "windows/amd64", "stage-0"},
		},
	}, {
		name: "stage used only by linux may RUN",
		dockerfile: `FROM --platform=$BUILDPLATFORM golang:1.26 AS build
RUN go build -o /out/hello .
FROM alpine AS final-linux
RUN apk add --no-cache ca-certificates
COPY --from=build /out/hello /hello
FROM mcr.microsoft.com/windows/nanoserver:ltsc2022 AS final-windows
COPY --from=build /out/hello /hello.exe
FROM final-${TARGETOS}
`,
		opts: Options{Platforms: allPlatforms},
	}, {
		name: "COPY --from chain brings a RUN stage into windows",
		dockerfile: `FROM mcr.microsoft.com/windows/servercore:ltsc2022 AS tools
RUN powershell -Command Invoke-WebRequest https://example.com/tool.exe -OutFile C:\tool.exe
FROM tools AS staged
COPY config.json C:/config.json
FROM mcr.microsoft.com/windows/nanoserver:ltsc2022 AS final-windows
COPY --from=1 C:/tool.exe C:/tool.exe
COPY --from=staged C:/config.json C:/config.json
FROM alpine AS final-linux
FROM final-${TARGETOS}
`,
		opts: Options{Platforms: allPlatforms},
		want: []want{{RuleRunInWindowsStage, 2, "windows/amd64", "tools"}},
	}, {
		name: "RUN --mount=from a windows stage",
		dockerfile: `FROM --platform=windows/amd64 mcr.microsoft.com/windows/servercore:ltsc2022 AS gen
RUN echo hi > C:\gen.txt
FROM mcr.microsoft.com/windows/nanoserver:ltsc2022
FROM --platform=$BUILDPLATFORM alpine AS pack
RUN --mount=from=gen,target=/gen cp /gen/gen.txt /out.txt
`,
		opts: Options{Platforms: []v1.Platform{linuxAMD64}},
		want: []want{{RuleRunInWindowsStage, 2, "linux/amd64", "gen"}},
	}, {
		name: "named target selects the windows stage",
		dockerfile: `FROM mcr.microsoft.com/windows/nanoserver:ltsc2022 AS win
RUN echo hi
FROM alpine AS lin
RUN echo hi
`,
		opts: Options{Platforms: []v1.Platform{windowsAMD64}, Target: "win"},
		want: []want{{RuleRunInWindowsStage, 2, "windows/amd64", "win"}},
	}, {
		name: "named target skips the windows stage",
		dockerfile: `FROM mcr.microsoft.com/windows/nanoserver:ltsc2022 AS win
RUN echo hi
FROM --platform=linux/amd64 alpine AS lin
RUN echo hi
`,
		opts: Options{Platforms: []v1.Platform{windowsAMD64}, Target: "lin"},
	}, {
		name: "multi-line RUN reports its first line",
		dockerfile: `FROM mcr.microsoft.com/windows/nanoserver:ltsc2022

# comment
RUN echo one && \
    echo two && \
    echo three
RUN <<EOT
echo heredoc
EOT
`,
		opts: Options{Platforms: []v1.Platform{windowsAMD64}},
		want: []want{{RuleRunInWindowsStage, 4, "windows/amd64", "stage-0"}, {RuleRunInWindowsStage, 7, "windows/amd64", "stage-0"}},
	}, {
		name: "build args pick the base stage",
		dockerfile: `ARG FLAVOR=plain
FROM mcr.microsoft.com/windows/nanoserver:ltsc2022 AS base-plain
FROM mcr.microsoft.com/windows/nanoserver:ltsc2022 AS base-tools
RUN echo tools
FROM base-${FLAVOR}
`,
		opts: Options{Platforms: []v1.Platform{windowsAMD64}, BuildArgs: map[string]string{"FLAVOR": "tools"}},
		want: []want{{RuleRunInWindowsStage, 4, "windows/amd64", "base-tools"}},
	}, {
		name: "COPY --link and ADD --link in the windows final stage",
		dockerfile: `FROM --platform=$BUILDPLATFORM golang:1.26 AS build
RUN GOOS=windows go build -o /out/hello.exe .
FROM mcr.microsoft.com/windows/nanoserver:ltsc2022
COPY --link --from=build /out/hello.exe /app/hello.exe
ADD --link=true config.json /app/config.json
COPY --link=false --from=build /out/hello.exe /app/copy.exe
COPY --from=build /out/hello.exe /app/plain.exe
ENTRYPOINT ["C:\\app\\hello.exe"]
`,
		opts: Options{Platforms: allPlatforms},
		want: []want{
			{RuleLinkInWindowsStage, 4, "windows/amd64", "stage-1"},
			{RuleLinkInWindowsStage, 5, "windows/amd64", "stage-1"},
		},
	}, {
		name: "COPY --link in a linux stage or a stage windows copies from passes",
		dockerfile: `FROM --platform=$BUILDPLATFORM golang:1.26 AS build
COPY --link . /src
RUN GOOS=windows go build -o /out/hello.exe /src
FROM alpine AS final-linux
COPY --link --from=build /out/hello.exe /hello
FROM mcr.microsoft.com/windows/nanoserver:ltsc2022 AS final-windows
COPY --from=build /out/hello.exe /app/hello.exe
FROM final-${TARGETOS}
`,
		opts: Options{Platforms: allPlatforms},
	}, {
		name: "COPY --link in the windows stage the final stage is FROM",
		dockerfile: `FROM mcr.microsoft.com/windows/nanoserver:ltsc2022 AS winbase
COPY --link hello.exe /app/hello.exe
FROM winbase AS final-windows
COPY config.json /app/config.json
FROM alpine AS final-linux
COPY --link hello /hello
FROM final-${TARGETOS}
`,
		opts: Options{Platforms: allPlatforms},
		want: []want{{RuleLinkInWindowsStage, 2, "windows/amd64", "winbase"}},
	}, {
		name: "COPY --link in a windows stage only copied from passes",
		dockerfile: `FROM mcr.microsoft.com/windows/nanoserver:ltsc2022 AS assets
COPY --link assets/ /assets/
FROM mcr.microsoft.com/windows/nanoserver:ltsc2022
COPY --from=assets /assets/ /app/assets/
`,
		opts: Options{Platforms: []v1.Platform{windowsAMD64}},
	}, {
		name: "os.version appears in the platform",
		dockerfile: `FROM mcr.microsoft.com/windows/nanoserver:ltsc2025
RUN echo hi
`,
		opts: Options{Platforms: []v1.Platform{
			{OS: "windows", Architecture: "amd64", OSVersion: "10.0.20348.4297"},
			{OS: "windows", Architecture: "amd64", OSVersion: "10.0.26100.6584"},
		}},
		want: []want{
			{RuleWindowsBaseRelease, 1, "windows/amd64:10.0.20348.4297", "stage-0"}, // ltsc2025 base, 20348 built
			{RuleRunInWindowsStage, 2, "windows/amd64:10.0.20348.4297", "stage-0"},
			{RuleRunInWindowsStage, 2, "windows/amd64:10.0.26100.6584", "stage-0"},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			fs, err := Preflight(strings.NewReader(tc.dockerfile), "Dockerfile", tc.opts)
			if err != nil {
				t.Fatalf("Preflight: %v", err)
			}
			var got []want
			for _, f := range fs {
				// A line from 1: the JSON contract's "line" is omitempty.
				if f.File != "Dockerfile" || f.Line < 1 || f.Severity != findings.Error || f.Message == "" {
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

func TestPreflightErrors(t *testing.T) {
	for _, tc := range []struct {
		name, dockerfile string
		opts             Options
		want             error
		contains         string
	}{
		{"unterminated heredoc", "FROM alpine\nRUN <<EOT\necho hi\n", Options{}, ErrInvalidDockerfile, "app/Dockerfile"},
		{"no FROM", "ARG X=1\n", Options{}, ErrInvalidDockerfile, "app/Dockerfile"},
		{"unknown instruction", "FROM alpine\nFROBNICATE x\n", Options{}, ErrInvalidDockerfile, "line 2"},
		{"SHELL not JSON", "FROM alpine\nSHELL /bin/bash -c\n", Options{}, ErrInvalidDockerfile, "SHELL"},
		{"unknown target", "FROM alpine AS a\n", Options{Target: "b"}, ErrTargetNotFound, `"b"`},
		{"empty base", "ARG BASE\nFROM ${BASE}\n", Options{}, ErrInvalidDockerfile, "should not be blank"},
		{"bad platform", "FROM --platform=nope/x/y/z alpine\n", Options{}, ErrInvalidDockerfile, "line 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Preflight(strings.NewReader(tc.dockerfile), "app/Dockerfile", tc.opts)
			t.Log(err)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.contains) {
				t.Fatalf("Preflight error = %v, want %v containing %q", err, tc.want, tc.contains)
			}
		})
	}
}
