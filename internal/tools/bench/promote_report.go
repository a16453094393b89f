package main

import (
	"fmt"
	"strings"
)

func isPromote(cr caseResult) bool {
	_, ok := cr.c.(*promoteCase)
	return ok
}

// promoteGoals judges the promote case (issue: "supply chain end to end"):
// the target holds the whole supply chain. Requests are reported, not
// judged against the peers: imgctl verifies the signatures at the source
// and again at the target, which neither peer does.
func (r *report) promoteGoals() []goal {
	var gs []goal
	for _, cr := range r.cases {
		if !isPromote(cr) {
			continue
		}
		me, _ := r.split(cr)
		if me == nil {
			return []goal{{title: "imgctl promote measured", detail: cr.c.Name() + ": imgctl not measured"}}
		}
		ms := summarize(me.samples)
		whole := goal{ok: ms.ok() && me.findings != nil, title: "imgctl promote copies the whole supply chain (digest, signature tags, referrers, attestations)"}
		var parts []string
		for _, tr := range cr.tools {
			bad := shortfalls(tr)
			if tr.tool.Name() == primary {
				whole.ok = whole.ok && len(bad) == 0
			}
			switch {
			case tr.findings == nil:
				parts = append(parts, tr.tool.Name()+": not checked")
			case len(bad) > 0:
				parts = append(parts, fmt.Sprintf("%s: %s", tr.tool.Name(), strings.Join(bad, ", ")))
			default:
				parts = append(parts, tr.tool.Name()+": all of it")
			}
		}
		whole.detail = strings.Join(parts, "; ") + fmt.Sprintf(". imgctl made %s requests (it verifies the signatures at both ends).", totalText(ms))
		gs = append(gs, whole)
	}
	return gs
}
