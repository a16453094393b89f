package verify

import (
	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/snapshot"
)

// Host is a node an index is evaluated on: verify's --target builds, or the
// nodes of a cluster.
type Host struct {
	// Name names the host in rows and findings: a target as given
	// (ltsc2022) or a node name.
	Name string
	// Platform is what the host's engines match images against; a Windows
	// host carries its version, at least major.minor.build, in OSVersion.
	Platform platform.Platform
	// Engines are simulated in order. The first decides what the host
	// runs; the others are simulated to compare with it. Empty means every
	// profile, containerd first.
	Engines []platform.Engine
}

// TargetHost returns the host of a target: a windows/amd64 node of the
// target's version running engines.
func TargetHost(t platform.Target, engines []platform.Engine) Host {
	return Host{Name: t.Name, Platform: t.Host(), Engines: engines}
}

// Build returns the host's Windows build, 0 when it has none.
func (h Host) Build() uint32 {
	b, _ := platform.Build(h.Platform.OSVersion)
	return b
}

// Selection is what one engine runs on one host.
type Selection struct {
	// Engine is the engine simulated.
	Engine platform.Engine
	// Index is the position in Snapshot.Entries of the entry the engine
	// selects, or -1 when it runs none.
	Index int
	// Runs reports whether the selected entry starts on the host: the
	// containerd 2.x profile accepts its platform there, since containerd
	// 2.x encodes the Windows host's own rules. False when Index is -1.
	Runs bool
	// Quirk is set when the engine is containerd 2.x and its string
	// ordering of os.version selects the entry while a compatible one is
	// numerically newer.
	Quirk *OrderingQuirk
	// Row is the selection as a Report.Targets row: the host's name and
	// build, the engine and the selected digest and os.version.
	Row TargetResult
}

// OrderingQuirk is containerd 2.x comparing os.version as strings: it
// selects an entry of os.version Selected although the compatible entry at
// Index has Newer, numerically newer (10.0.26100.9999 over
// 10.0.26100.33674).
type OrderingQuirk struct {
	Selected, Newer platform.Version
	// Index is the position in Snapshot.Entries of the first compatible
	// entry, in index order, that is newer than the selected one.
	Index int
}

// HostResult is what the engines of one host select.
type HostResult struct {
	// Host is the host evaluated, with its engines filled in.
	Host Host
	// Selections has one Selection per engine of the host, in order.
	Selections []Selection
}

// Deciding returns the selection of the host's first engine, the one that
// decides what the host runs.
func (r HostResult) Deciding() Selection { return r.Selections[0] }

// Evaluation is what EvaluateHosts found on a snapshot.
type Evaluation struct {
	// Hosts has one HostResult per host, in the order given.
	Hosts []HostResult

	s *snapshot.Snapshot
}

// EvaluateHosts simulates every engine of every host on the index of s:
// which entry it selects, whether that entry starts there, and containerd's
// ordering quirk. It does no I/O and phrases nothing: verify's targets and
// kube's nodes word their own findings from what it returns.
func EvaluateHosts(s *snapshot.Snapshot, hosts []Host) *Evaluation {
	ev := &Evaluation{Hosts: make([]HostResult, 0, len(hosts)), s: s}
	cands := candidates(s)
	for _, h := range hosts {
		if len(h.Engines) == 0 {
			h.Engines = platform.Engines()
		}
		r := HostResult{Host: h, Selections: make([]Selection, 0, len(h.Engines))}
		for _, e := range h.Engines {
			r.Selections = append(r.Selections, ev.selection(h, e, cands))
		}
		ev.Hosts = append(ev.Hosts, r)
	}
	return ev
}

func (ev *Evaluation) selection(h Host, e platform.Engine, cands []platform.Candidate) Selection {
	sel := Selection{Engine: e, Index: e.Select(h.Platform, cands)}
	sel.Row = TargetResult{Target: h.Name, Build: h.Build(), Engine: e.Name(), Releases: platform.PrimaryRanges(e.Name())}
	if sel.Index < 0 {
		return sel
	}
	en := &ev.s.Entries[sel.Index]
	sel.Row.Selected = en.Descriptor.Digest.String()
	sel.Row.OSVersion = en.OSVersion()
	p := en.Platform()
	sel.Runs = p != nil && platform.ContainerdEngine().Match(h.Platform, *p)
	if platform.RanksByString(e) || platform.RanksByIndexOrder(e) {
		sel.Quirk = ev.orderingQuirk(e, h.Platform, cands, sel.Index)
	}
	return sel
}

// candidates lists every entry of s as engines see it, in index order: the
// descriptor platform (for a single manifest, the config's) and the config
// platform for entries judged by their config.
func candidates(s *snapshot.Snapshot) []platform.Candidate {
	out := make([]platform.Candidate, len(s.Entries))
	for i := range s.Entries {
		e := &s.Entries[i]
		out[i] = platform.Candidate{Platform: e.Descriptor.Platform, Config: e.ConfigPlatform()}
		if s.Index == nil {
			out[i].Platform = e.ConfigPlatform()
		}
	}
	return out
}

// orderingQuirk returns the first compatible entry, in index order, whose
// full os.version is numerically newer than the selected entry's, or nil.
// Only entries the engine could have put first count: those with a
// descriptor platform (images.Manifest sorts the others last) in the
// selected entry's tier (platforms.Only ranks windows/386 after amd64).
func (ev *Evaluation) orderingQuirk(e platform.Engine, host platform.Platform, cands []platform.Candidate, sel int) *OrderingQuirk {
	sv, err := platform.ParseVersion(ev.s.Entries[sel].OSVersion())
	if err != nil || cands[sel].Platform == nil {
		return nil
	}
	tier := platform.Tier(e, host, *cands[sel].Platform)
	for _, i := range platform.Compatible(e, host, cands) {
		if cands[i].Platform == nil || platform.Tier(e, host, *cands[i].Platform) != tier {
			continue
		}
		v, err := platform.ParseVersion(ev.s.Entries[i].OSVersion())
		if err == nil && v.Compare(sv) > 0 {
			return &OrderingQuirk{Selected: sv, Newer: v, Index: i}
		}
	}
	return nil
}

// Unselected returns the positions in Snapshot.Entries of the Windows
// variants (image manifests, not attestations) that no engine of any host
// selects where they start, in index order: a variant only Docker picks on
// a node it cannot start on serves no one.
func (ev *Evaluation) Unselected() []int {
	return ev.windowsVariantsBut(true, func(sel Selection) bool { return sel.Runs })
}

// Unserved returns the positions in Snapshot.Entries of the Windows
// variants that the deciding engine of no host selects where they start:
// Unselected, and the variants selected only where they fail to start.
func (ev *Evaluation) Unserved() []int {
	return ev.windowsVariantsBut(false, func(sel Selection) bool { return sel.Runs })
}

// windowsVariantsBut returns the Windows variants that no selection for
// which reached holds has selected: of any engine with all, else of each
// host's deciding engine.
func (ev *Evaluation) windowsVariantsBut(all bool, reached func(Selection) bool) []int {
	hit := map[int]bool{}
	for _, r := range ev.Hosts {
		sels := r.Selections[:1]
		if all {
			sels = r.Selections
		}
		for _, sel := range sels {
			if sel.Index >= 0 && reached(sel) {
				hit[sel.Index] = true
			}
		}
	}
	var out []int
	for i := range ev.s.Entries {
		e := &ev.s.Entries[i]
		p := entryPlatform(e)
		if e.Manifest == nil || e.IsAttestation() || p == nil || p.OS != "windows" || hit[i] {
			continue
		}
		out = append(out, i)
	}
	return out
}
