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

// Engine profile names.
const (
	Containerd   = "containerd"
	Containerd17 = "containerd-1.7"
	Docker       = "docker"
)

// Engines returns every profile, containerd (the one that decides a
// Kubernetes pull) first.
func Engines() []Engine {
	return []Engine{ContainerdEngine{}, Containerd17Engine{}, DockerEngine{}}
}

// EngineNames lists the profile names, for help texts and errors.
func EngineNames() []string {
	var out []string
	for _, e := range Engines() {
		out = append(out, e.Name())
	}
	return out
}

// EngineByName returns the profile with that name.
func EngineByName(name string) (Engine, error) {
	for _, e := range Engines() {
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

// selectSorted is the selection shared by the containerd profiles, after
// containerd's images.Manifest: keep the entries that match or have no
// platform, sort them stably (entries without a platform last), take the
// first (containerd's limit of one), and for an entry without a platform
// check its config.
func selectSorted(host Platform, cands []Candidate, match func(Platform) bool, less func(a, b Platform) bool) int {
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
	if first.Platform == nil && (first.Config == nil || !match(*first.Config)) {
		return -1
	}
	return idx[0]
}
