package lint

import (
	"fmt"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

func TestBaseFileReads(t *testing.T) {
	const base = "mcr.microsoft.com/windows/nanoserver:ltsc2025"
	head := "ARG WINDOWS_BASE=" + base + "\n"
	for _, tc := range []struct {
		name, df string
		want     []string
	}{
		{"COPY onto the base reads nothing", head + "FROM ${WINDOWS_BASE}\nCOPY a /a\n", nil},
		{"COPY --from a Linux stage", head + "FROM --platform=$BUILDPLATFORM alpine AS b\nCOPY a /a\nFROM ${WINDOWS_BASE}\nCOPY --from=b /a /a\n", nil},
		{"COPY --from a stage FROM the base", head + "FROM ${WINDOWS_BASE} AS w\nFROM ${WINDOWS_BASE}\nCOPY --from=w /x /x\n",
			[]string{`line 4: --from=w in stage "stage-1" reads files of the base`}},
		{"COPY --from a stage index, through a stage chain", head + "FROM ${WINDOWS_BASE} AS w\nFROM w AS w2\nFROM ${WINDOWS_BASE}\nCOPY --from=1 /x /x\n",
			[]string{`line 5: --from=1 in stage "stage-2" reads files of the base`}},
		{"COPY --from the image by its familiar name", head + "FROM ${WINDOWS_BASE}\nCOPY --from=mcr.microsoft.com/windows/nanoserver:ltsc2025 /x /x\n",
			[]string{`line 3: --from=mcr.microsoft.com/windows/nanoserver:ltsc2025 in stage "stage-0" reads files of the base`}},
		{"COPY --from another image", head + "FROM ${WINDOWS_BASE}\nCOPY --from=mcr.microsoft.com/windows/servercore:ltsc2025 /x /x\n", nil},
		{"RUN --mount=from in a Linux stage", head + "FROM ${WINDOWS_BASE} AS w\nFROM --platform=$BUILDPLATFORM alpine AS b\nRUN --mount=from=w,target=/w cp /w/x /x\n" +
			"FROM ${WINDOWS_BASE}\nCOPY --from=b /x /x\n",
			[]string{`line 4: --from=w in stage "b" reads files of the base`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := v1.Platform{OS: "windows", Architecture: "amd64"}
			got, err := BaseFileReads([]byte(tc.df), "Dockerfile", Options{Platforms: []v1.Platform{p}}, p, base)
			if err != nil {
				t.Fatal(err)
			}
			var gs []string
			for _, r := range got {
				gs = append(gs, r.String())
			}
			if fmt.Sprint(gs) != fmt.Sprint(tc.want) {
				t.Errorf("got %q, want %q", gs, tc.want)
			}
		})
	}
}
