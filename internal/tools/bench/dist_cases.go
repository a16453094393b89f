package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// distCase is a case run on the CNCF distribution registry, with issue
// 17's figures for it: its limit and goal under basic auth. Those are what
// the issue wrote, not results; the bench computes the limit from the
// case's fixture (limit) and holds imgctl to the issue's margin over it
// (goal).
type distCase struct {
	benchCase
	issueLimit, issueGoal int
}

// distCases returns the distribution cases in report order: fresh values,
// since Setup records the sources of one registry.
func distCases() []distCase {
	var out []distCase
	issue := map[string][2]int{"merge-3": {21, 22}, "merge-40": {243, 266}}
	for _, c := range filter(cases(), "merge-3,merge-40", benchCase.Name) {
		out = append(out, distCase{benchCase: c, issueLimit: issue[c.Name()][0], issueGoal: issue[c.Name()][1]})
	}
	return append(out, distCase{benchCase: rebaseOneWindows(), issueLimit: 14, issueGoal: 15})
}

// goal is the most requests imgctl may make: the computed limit plus the
// margin the issue allowed over its own limit.
func (d distCase) goal() int {
	limit, _ := d.limit()
	return limit + d.issueGoal - d.issueLimit
}

// rebaseOneWindows is an index of one Windows variant and its BuildKit-style
// attestation manifest, built on a nanoserver-shaped base whose tag then
// moved to the next revision of the same build.
func rebaseOneWindows() *rebaseCase {
	return &rebaseCase{
		name:      "rebase-1-windows",
		inPlace:   true,
		title:     "Rebase the one Windows variant of an index onto a new nanoserver revision",
		platforms: []platformSpec{{OS: "windows", Arch: "amd64", OSVersion: rebaseWinOld}},
		about: fmt.Sprintf("The monthly job at its smallest. `src/rebase-1-windows:1` is an index of one windows/amd64 "+
			"`%s` image (with a BuildKit-style attestation manifest), built on `base/nanoserver:ltsc2025` (an index "+
			"of one nanoserver-shaped image: the regtest Windows base layer with Files/ and Hives/, and a %d KiB payload "+
			"layer), with a %d KiB app layer and the base.name/base.digest annotations. Then the base tag moves to `%s`. "+
			"As the monthly job rebases within the app's own repository, each run first gets a copy of the source "+
			"index (children and blobs, not counted) in its fresh repository `bench/rebase-1-windows/<tool>-runN:1` "+
			"and rebases that to `:merged` there, so the app's own blobs are in place and no run finds another's "+
			"uploads. Commands and checks as in rebase-3.", rebaseWinOld, runtimeLayerSize>>10, appLayerSize>>10, rebaseWinNew),
	}
}

// limit returns the fewest requests the case's work takes on a registry
// that links blobs per repository (issue 17's count), from the fixture that
// Setup pushed, and how it adds up.
//
//   - merge: one handshake; per source, GET manifest, GET config, one mount
//     per blob (the config and each layer); then a tag check and the index
//     PUT.
//   - rebase, within the source's repository: one handshake; reads of the
//     index, and per variant of the app manifest and config, the old base
//     manifest, the new base tag (and its child when the tag holds an
//     index) and the new base config; mounts of the new base layers; the
//     config upload (POST and PUT: distribution has no single-request
//     upload) and the manifest PUT; the index PUT. The issue's count stops
//     there; a source with attestations adds, per attestation, the
//     provenance imgctl writes for the rebased variant: its statement and
//     config uploads and the attestation manifest PUT.
func (d distCase) limit() (int, string) {
	switch c := d.benchCase.(type) {
	case *mergeCase:
		n, groups := 1+2, map[int]int{} // the handshake, the tag check and the index PUT
		for _, s := range c.sources {
			n += 3 + s.blobs
			groups[s.blobs]++
		}
		var parts []string
		for _, b := range slices.Sorted(maps.Keys(groups)) {
			parts = append(parts, fmt.Sprintf("%d sources × (2 reads + %d mounts + 1 PUT)", groups[b], b))
		}
		return n, fmt.Sprintf("1 handshake + %s + tag check + index PUT = %d", strings.Join(parts, " + "), n)
	case *rebaseCase:
		n := 1 + 1 + 1 // the handshake, the index read and the index PUT
		var parts []string
		for _, v := range c.plats() {
			reads := 5 + boolInt(c.baseIndexed)
			mounts := len(c.want[v.OS+"/"+v.Arch].baseLayers)
			n += reads + mounts + 2 + 1
			parts = append(parts, fmt.Sprintf("%s: %d reads + %d mounts + config POST and PUT + manifest PUT", key(v), reads, mounts))
		}
		how := fmt.Sprintf("1 handshake + index GET + %s + index PUT = %d", strings.Join(parts, " + "), n)
		if c.attestations > 0 {
			n += 5 * c.attestations
			how += fmt.Sprintf("; + %d provenance × (statement and config POST and PUT + manifest PUT) = %d", c.attestations, n)
		}
		return n, how
	}
	return 0, "no limit for this case"
}
