package nodes

import (
	"slices"

	"github.com/moby/buildkit/client"

	"github.com/imgctl/imgctl/findings"
	"github.com/imgctl/imgctl/lint"
)

// NativeWindows reports whether a daemon runs Windows stages natively, so
// that a RUN in a Windows stage can run there: it was mapped as a Windows
// node (a.Windows) and one of its workers lists a windows platform. A
// Linux daemon standing in for a Windows node is not native, and neither
// is a Windows daemon that was only reached as the fallback builder.
func NativeWindows(a Assignment, workers []*client.WorkerInfo) bool {
	if !a.Windows {
		return false
	}
	for _, w := range workers {
		if w == nil {
			continue
		}
		for _, p := range w.Platforms {
			if p.OS == "windows" {
				return true
			}
		}
	}
	return false
}

// WaiveRunInWindows returns findings without the run-in-windows-stage ones
// when native is true (the variant is solved on a native Windows node),
// else findings unchanged.
func WaiveRunInWindows(fs []findings.Finding, native bool) []findings.Finding {
	if !native {
		return fs
	}
	return slices.DeleteFunc(slices.Clone(fs), func(f findings.Finding) bool { return f.Rule == lint.RuleRunInWindowsStage })
}
