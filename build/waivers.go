package build

import (
	"errors"

	"github.com/moby/buildkit/client"

	"github.com/imgctl/imgctl/build/nodes"
	"github.com/imgctl/imgctl/findings"
	"github.com/imgctl/imgctl/lint"
)

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
		native := nodes.NativeWindows(p.Assignments[i], ws)
		p.native = append(p.native, native)
		kept = append(kept, nodes.WaiveRunInWindows(fs, native)...)
	}
	if len(kept) == 0 {
		return nil
	}
	return lint.NewError(kept)
}
