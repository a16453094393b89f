package lint

import (
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// FuzzPreflight: Preflight never panics on any Dockerfile, and an error
// names the file.
func FuzzPreflight(f *testing.F) {
	for _, s := range []string{
		"FROM alpine\nRUN echo hi\n",
		"FROM --platform=$BUILDPLATFORM golang AS build\nRUN go build\nFROM mcr.microsoft.com/windows/nanoserver:ltsc2022 AS final-windows\nCOPY --from=build /app C:/app\nENTRYPOINT [\"C:\\app\\hello.exe\"]\nFROM scratch AS final-linux\nFROM final-${TARGETOS}\n",
		"FROM alpine\nENTRYPOINT [\"/bin/sh\", \n",
		"FROM alpine\nRUN <<EOF\necho unterminated\n",
		"FROM alpine\nCOPY <<EOT /x\nhello\nEOT\n",
		"ARG BASE=alpine\nFROM ${BASE}\nCMD [\"a\"\n",
		"FROM a AS b\nFROM b AS a\n",
		"FROM\n",
		"# syntax=docker/dockerfile:1\n\\\n",
	} {
		f.Add(s)
	}
	opts := Options{Platforms: []v1.Platform{
		{OS: "linux", Architecture: "amd64"},
		{OS: "windows", Architecture: "amd64", OSVersion: "10.0.26100.1"},
	}}
	f.Fuzz(func(t *testing.T, s string) {
		_, err := Preflight(strings.NewReader(s), "Dockerfile.fuzz", opts)
		if err != nil && !strings.Contains(err.Error(), "Dockerfile.fuzz") {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}
