package build

import (
	"errors"
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

// waivable reports whether err is a *lint.Error that a native Windows
// node could still lift: every finding is a RUN in a Windows stage of a
// variant mapped to a Windows node. Build then contacts the nodes to find
// out; any other finding stops the build before a daemon is contacted.
func (p *Plan) waivable(err error) bool {
	var pe *lint.Error
	if p == nil || !errors.As(err, &pe) || len(p.findings) != len(p.Assignments) {
		return false
	}
	for i, fs := range p.findings {
		for _, f := range fs {
			if f.Rule != lint.RuleRunInWindowsStage || !p.Assignments[i].Windows {
				return false
			}
		}
	}
	return true
}

// applyWaivers drops the run-in-windows-stage findings of the variants
// whose node is native Windows (workers are per variant) and returns a
// *lint.Error for what remains, nil when nothing does.
func (p *Plan) applyWaivers(workers [][]*client.WorkerInfo) error {
	var kept []findings.Finding
	for i, fs := range p.findings {
		var ws []*client.WorkerInfo
		if i < len(workers) {
			ws = workers[i]
		}
		native := NativeWindows(p.Assignments[i], ws)
		p.native = append(p.native, native)
		kept = append(kept, WaiveRunInWindows(fs, native)...)
	}
	if len(kept) == 0 {
		return nil
	}
	return lint.NewError(kept)
}
