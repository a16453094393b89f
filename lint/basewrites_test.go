package lint

import (
	"fmt"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// TestBaseFileWrites: the paths the stages on a base write, resolved as
// the Dockerfile frontend resolves them for a Windows stage.
func TestBaseFileWrites(t *testing.T) {
	const base = "mcr.microsoft.com/windows/nanoserver:ltsc2025"
	head := "ARG WINDOWS_BASE=" + base + "\n"
	for _, tc := range []struct {
		name, df, workdir string
		want              []string // nil: unknown
	}{
		{"absolute, Windows and relative destinations", head + "FROM ${WINDOWS_BASE}\nCOPY a /app/a.exe\nCOPY b C:\\\\Tools\\\\\nWORKDIR work\nCOPY c .\nADD d.tar sub/\n",
			`C:\Users\ContainerUser`, []string{"/app/a.exe", "/Tools", "/Users/ContainerUser/work", "/Users/ContainerUser/work", "/Users/ContainerUser/work/sub"}},
		{"a stage chain starts where its parent ended", head + "FROM ${WINDOWS_BASE} AS w\nWORKDIR /w\nFROM w\nCOPY a x\n",
			"", []string{"/w", "/w/x"}},
		{"a Linux stage writes nothing on the base", head + "FROM --platform=$BUILDPLATFORM alpine AS b\nCOPY a /linux\nFROM ${WINDOWS_BASE}\nCOPY --from=b /linux /app\n",
			"", []string{"/app"}},
		{"a variable makes the writes unknown", head + "FROM ${WINDOWS_BASE}\nENV D=/app\nCOPY a $D/\n", "", nil},
		{"RUN makes the writes unknown", head + "FROM ${WINDOWS_BASE}\nRUN echo\n", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := v1.Platform{OS: "windows", Architecture: "amd64"}
			w, err := BaseFileWrites([]byte(tc.df), "Dockerfile", Options{Platforms: []v1.Platform{p}}, p, base)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := w.Paths(tc.workdir)
			if ok != (tc.want != nil) || fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("paths %v (known %v, %q), want %v", got, ok, w.Reason, tc.want)
			}
		})
	}
}

func TestWindowsPath(t *testing.T) {
	for in, want := range map[[2]string]string{
		{"/", `C:\app\`}: "/app", {"/", "c:/x/../y"}: "/y", {`C:\w`, "sub"}: "/w/sub", {"", "."}: "/", {"/a", `..\b`}: "/b",
	} {
		if got := WindowsPath(in[0], in[1]); got != want {
			t.Errorf("WindowsPath(%q, %q) = %q, want %q", in[0], in[1], got, want)
		}
	}
}
