package main

import (
	"fmt"
	"strings"
)

func isRebase(cr caseResult) bool {
	_, ok := cr.c.(*rebaseCase)
	return ok
}

// rebaseGoals judges the rebase cases (issue: "imgctl rebase and the
// monthly base-image job"): no layer bytes, os.version updated on the
// descriptor and in the config, a correct result, and fewer requests.
func (r *report) rebaseGoals() []goal {
	var gs []goal
	for _, cr := range r.cases {
		if !isRebase(cr) {
			continue
		}
		me, peers := r.split(cr)
		if me == nil {
			return []goal{{title: "imgctl rebase measured", detail: cr.c.Name() + ": imgctl not measured"}}
		}
		ms := summarize(me.samples)
		layers := goal{ok: ms.ok() && ms.MaxLayer == 0, title: "zero layer bytes pass through imgctl rebase",
			detail: fmt.Sprintf("%s: imgctl at most %s B in %d runs.", cr.c.Name(), thousands(ms.MaxLayer), ms.Runs-ms.Failed)}
		osv := goal{ok: true, title: "imgctl rebase updates os.version on the descriptor and in the config"}
		correct := goal{ok: true, title: "imgctl's rebased index is correct (base and app layers, base.digest, media types, attestations)"}
		var osvD, corD []string
		for _, tr := range cr.tools {
			bad := shortfalls(tr)
			okOSV := tr.findings != nil && findingOK(tr, findDescOSV) && findingOK(tr, findConfigOSV)
			osvD = append(osvD, fmt.Sprintf("%s %s", tr.tool.Name(), map[bool]string{true: "updates both", false: "does not"}[okOSV]))
			if tr.tool.Name() == primary {
				osv.ok = okOSV
				correct.ok = tr.findings != nil && len(bad) == 0
			}
			if len(bad) > 0 {
				corD = append(corD, fmt.Sprintf("%s: %s", tr.tool.Name(), strings.Join(bad, ", ")))
			}
		}
		osv.detail = strings.Join(osvD, "; ") + "."
		correct.detail = "Shortfalls: " + strings.Join(append(corD, "none other"), "; ") + "."
		fewer, _, parts := fewerThanPeers(ms, peers)
		reqs := goal{ok: ms.ok() && fewer, title: "imgctl rebase makes fewer registry requests than either peer"}
		reqs.detail = fmt.Sprintf("%s: imgctl %s vs %s (median requests per run; each peer's count is one rebase per variant and an index merge).",
			cr.c.Name(), totalText(ms), strings.Join(parts, ", "))
		gs = append(gs, layers, osv, correct, reqs)
	}
	return gs
}

func findingOK(tr *toolResult, name string) bool {
	f, ok := findingOf(tr, name)
	return ok && f.OK
}
