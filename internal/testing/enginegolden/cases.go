package enginegolden

import (
	"fmt"
	"math/rand/v2"

	specs "github.com/opencontainers/image-spec/specs-go/v1"
)

// Hosts are the node os.versions of the table, as containerd's
// DefaultSpec() gives them: ltsc2019, ltsc2022, ltsc2025 and Windows 11
// 25H2.
var Hosts = []string{"10.0.17763", "10.0.20348", "10.0.26100", "10.0.26200"}

// Cases returns the table's cases: the real-world shapes, then n random
// indexes, each on every host. The same n gives the same cases.
func Cases(n int) []Case {
	var out []Case
	for _, s := range shapes() {
		for _, h := range Hosts {
			out = append(out, Case{Name: s.name, Host: h, Entries: s.entries})
		}
	}
	r := rand.New(rand.NewPCG(24, 2026))
	for i := range n {
		es := randomIndex(r)
		for _, h := range Hosts {
			out = append(out, Case{Name: fmt.Sprintf("random-%02d", i), Host: h, Entries: es})
		}
	}
	return out
}

func win(version string, features ...string) specs.Platform {
	return specs.Platform{OS: "windows", Architecture: "amd64", OSVersion: version, OSFeatures: features}
}

func linux(arch string) specs.Platform {
	return specs.Platform{OS: "linux", Architecture: arch}
}

// described is an entry whose descriptor carries the config's platform.
func described(p specs.Platform) Entry {
	q := p
	return Entry{Platform: &q, Config: p}
}

// bare is an entry without a descriptor platform, as `imagetools create`
// writes one from a single manifest.
func bare(p specs.Platform) Entry { return Entry{Config: p} }

type shape struct {
	name    string
	entries []Entry
}

// shapes are indexes as tools write them, and the cases issue 24 names.
func shapes() []shape {
	return []shape{
		{"oldest-first", []Entry{described(win("10.0.20348.4297")), described(win("10.0.26100.6584"))}},
		{"newer-first-older-revision-higher", []Entry{described(win("10.0.26100.2894")), described(win("10.0.20348.3091"))}},
		{"ltsc2022-only", []Entry{described(linux("amd64")), described(win("10.0.20348.4297"))}},
		{"imgctl-newest-first", []Entry{described(linux("amd64")), described(linux("arm64")), described(win("10.0.26100.6584")), described(win("10.0.20348.4297")), described(win("10.0.17763.7792"))}},
		{"buildkit-order", []Entry{described(linux("amd64")), described(win("10.0.17763.7792")), described(win("10.0.20348.4297")), described(win("10.0.26100.6584"))}},
		{"string-order-quirk", []Entry{described(win("10.0.26100.33674")), described(win("10.0.26100.9999"))}},
		{"imagetools-dropped-platform", []Entry{described(linux("amd64")), bare(win("10.0.20348.4297")), bare(win("10.0.26100.6584"))}},
		{"hostprocess", []Entry{described(win("")), described(win("10.0.26100.6584"))}},
		{"win32k-feature", []Entry{described(win("10.0.26100.6584", "win32k")), described(win("10.0.20348.4297"))}},
		{"unknown-feature", []Entry{described(win("10.0.26100.6584", "win32k", "servicing")), described(win("10.0.20348.4297"))}},
		{"windows-386", []Entry{described(specs.Platform{OS: "windows", Architecture: "386", OSVersion: "10.0.26100.6584"}), described(win("10.0.20348.4297"))}},
		{"mixed-case-os", []Entry{described(specs.Platform{OS: "Windows", Architecture: "amd64", OSVersion: "10.0.26100.6584"}), described(win("10.0.20348.4297"))}},
		{"annual-channel", []Entry{described(win("10.0.25398.1849")), described(win("10.0.20348.4297"))}},
		{"malformed", []Entry{described(win("10.0")), described(win("10.0.x.1")), described(win("10.0.20348.4297"))}},
		{"out-of-range-build", []Entry{described(win("10.0.86100.1")), described(win("10.0.20348.4297"))}},
		{"out-of-range-major", []Entry{described(win("266.0.20348.1")), described(win("10.0.20348.4297"))}},
	}
}

// randomIndex is one index with Windows entries in random order, some
// without a descriptor platform, some with os.features, among Linux ones.
func randomIndex(r *rand.Rand) []Entry {
	builds := []int{17763, 19042, 20348, 22621, 25398, 26100, 26200, 26300}
	revisions := []string{"", ".1", ".887", ".2894", ".3091", ".4297", ".6584", ".9999", ".33674"}
	features := [][]string{nil, nil, nil, {"win32k"}, {"servicing"}}
	var es []Entry
	for range 1 + r.IntN(2) {
		es = append(es, described(linux([]string{"amd64", "arm64"}[r.IntN(2)])))
	}
	for range 1 + r.IntN(4) {
		p := win(fmt.Sprintf("10.0.%d%s", builds[r.IntN(len(builds))], revisions[r.IntN(len(revisions))]), features[r.IntN(len(features))]...)
		switch r.IntN(12) {
		case 0:
			p.OS = "Windows"
		case 1:
			p.Architecture = "386"
		case 2:
			p.OSVersion = ""
		}
		if r.IntN(6) == 0 {
			es = append(es, bare(p))
		} else {
			es = append(es, described(p))
		}
	}
	r.Shuffle(len(es), func(i, j int) { es[i], es[j] = es[j], es[i] })
	return es
}
