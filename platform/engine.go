package platform

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// ErrUnknownEngine is returned by EngineByName for a name it does not know.
var ErrUnknownEngine = errors.New("unknown engine")

// Candidate is one entry of an index as an engine sees it.
type Candidate struct {
	// Platform is the platform on the index descriptor; nil when the entry
	// has none.
	Platform *Platform
	// Config is the platform read from the entry's image config. containerd
	// judges an entry without a descriptor platform by it. It may be nil
	// when the config is unknown.
	Config *Platform
}

// Engine is a container engine profile: how it decides that an image
// platform runs on a host and which variant of an index it runs.
type Engine interface {
	// Name is the profile name used on the command line.
	Name() string
	// Match reports whether the engine accepts an image platform on host.
	Match(host, image Platform) bool
	// Select returns the position in cands of the entry the engine runs on
	// host, or -1 when it runs none.
	Select(host Platform, cands []Candidate) int
}

// Engines returns the profiles verify simulates by default: every
// supported containerd release line, newest first, then Docker's classic
// image store.
func Engines() []Engine {
	return []Engine{profileContainerd, profileContainerdOSFeatures, profileContainerdLTSCFloor,
		profileContainerdIndexOrder, profileContainerdLegacy, DockerEngine{}}
}

// allEngines adds the profiles of Docker's containerd image store, which
// only a docker@VERSION+containerd-store engine selects.
func allEngines() []Engine {
	return append(Engines(), profileDockerStoreLTSCFloor, profileDockerStoreOSFeatures)
}

// EngineNames lists the profile names, for help texts and errors.
func EngineNames() []string {
	var out []string
	for _, e := range allEngines() {
		out = append(out, e.Name())
	}
	return out
}

// EngineByName returns the profile with that name.
func EngineByName(name string) (Engine, error) {
	for _, e := range allEngines() {
		if e.Name() == name {
			return e, nil
		}
	}
	return nil, fmt.Errorf("%w %q: want one of %s", ErrUnknownEngine, name, strings.Join(EngineNames(), ", "))
}

// Compatible returns the positions of the candidates the engine accepts on
// host, in index order. An entry without a descriptor platform is judged by
// its config.
func Compatible(e Engine, host Platform, cands []Candidate) []int {
	var out []int
	for i, c := range cands {
		p := c.Platform
		if p == nil {
			p = c.Config
		}
		if p != nil && e.Match(host, *p) {
			out = append(out, i)
		}
	}
	return out
}

// selectSorted is containerd's images.Manifest on an index: keep the
// entries whose descriptor platform matches or that have none, sort them
// stably (entries without a platform last), take the first (its limit of
// one), and judge an entry without a platform by its config.
func selectSorted(cands []Candidate, match, config func(Platform) bool, less func(a, b Platform) bool) int {
	var idx []int
	for i, c := range cands {
		if c.Platform == nil || match(*c.Platform) {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(i, j int) bool {
		a, b := cands[idx[i]].Platform, cands[idx[j]].Platform
		if a == nil {
			return false
		}
		if b == nil {
			return true
		}
		return less(*a, *b)
	})
	if len(idx) == 0 {
		return -1
	}
	first := cands[idx[0]]
	if first.Platform == nil && (first.Config == nil || !config(*first.Config)) {
		return -1
	}
	return idx[0]
}
