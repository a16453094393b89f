package lint

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/containerd/platforms"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/shell"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"
)

// buildPlatform is the platform of the Linux builder that runs BuildKit.
var buildPlatform = v1.Platform{OS: "linux", Architecture: "amd64"}

// stage is one build stage resolved for one target platform.
type stage struct {
	index    int
	name     string // the stage name as BuildKit shows it: AS name, or stage-N
	st       *instructions.Stage
	base     *stage
	baseName string            // the FROM image or stage name after ARG expansion
	baseArgs map[string]bool   // the variables the FROM names, set or not
	platform ocispecs.Platform // effective platform that the stage's commands run on
	deps     []*stage          // base stage, COPY --from and RUN --mount=from stages
}

// stageGraph is the stage graph of a Dockerfile for one target platform.
type stageGraph struct {
	stages []*stage
	target *stage
}

// resolveStages follows dockerfile2llb: expand FROM with the global ARGs, link
// stages by name or index, and give each stage its effective platform.
func resolveStages(sts []instructions.Stage, metaArgs []instructions.ArgCommand, escape rune, target v1.Platform, opts Options) (*stageGraph, error) {
	lex := shell.NewLex(escape)
	tp := platforms.Normalize(ocispecs.Platform{
		OS: target.OS, Architecture: target.Architecture, Variant: target.Variant, OSVersion: target.OSVersion,
	})
	env, err := globalArgs(lex, metaArgs, tp, targetStage(sts, opts), opts)
	if err != nil {
		return nil, err
	}
	g := &stageGraph{}
	byName := map[string]*stage{}
	for i := range sts {
		s, err := newStage(lex, env, &sts[i], i, tp, byName)
		if err != nil {
			return nil, err
		}
		g.stages = append(g.stages, s)
		if sts[i].Name != "" {
			byName[strings.ToLower(sts[i].Name)] = s
		}
	}
	for _, s := range g.stages {
		if err := s.linkCommands(g.stages, byName); err != nil {
			return nil, err
		}
	}
	g.target = g.stages[len(g.stages)-1]
	if opts.Target != "" {
		t, ok := byName[strings.ToLower(opts.Target)]
		if !ok {
			return nil, fmt.Errorf("%w: %q", ErrTargetNotFound, opts.Target)
		}
		g.target = t
	}
	return g, nil
}

func newStage(lex *shell.Lex, env *argEnv, st *instructions.Stage, i int, tp ocispecs.Platform, byName map[string]*stage) (*stage, error) {
	line := startLine(st.Location)
	res, err := lex.ProcessWordWithMatches(st.BaseName, env)
	if err != nil {
		return nil, fmt.Errorf("line %d: expanding %q: %w", line, st.BaseName, err)
	}
	baseName := res.Result
	if baseName == "" {
		return nil, fmt.Errorf("line %d: base name (%s) should not be blank", line, st.BaseName)
	}
	s := &stage{index: i, name: st.Name, st: st, baseName: baseName, baseArgs: map[string]bool{}, platform: tp}
	for _, vars := range []map[string]struct{}{res.Matched, res.Unmatched} {
		for k := range vars {
			s.baseArgs[k] = true
		}
	}
	if s.name == "" {
		s.name = fmt.Sprintf("stage-%d", i)
	}
	if st.Platform != "" {
		v, _, err := lex.ProcessWord(st.Platform, env)
		if err != nil {
			return nil, fmt.Errorf("line %d: expanding platform %q: %w", line, st.Platform, err)
		}
		if s.platform, err = platforms.Parse(v); err != nil {
			return nil, fmt.Errorf("line %d: parsing platform %q: %w", line, st.Platform, err)
		}
	}
	// Like BuildKit's addState: only earlier stages, matched on the exact name.
	if b, ok := byName[baseName]; ok {
		s.base = b
		s.platform = b.platform // dispatchState.init inherits the base's platform
		s.deps = append(s.deps, b)
	}
	return s, nil
}

// linkCommands adds the stages named by COPY --from and RUN --mount=from.
// Like BuildKit, --from is not expanded and an unknown name is an image.
func (s *stage) linkCommands(all []*stage, byName map[string]*stage) error {
	for _, cmd := range s.st.Commands {
		switch c := cmd.(type) {
		case *instructions.CopyCommand:
			if c.From == "" {
				continue
			}
			if idx, err := strconv.Atoi(c.From); err == nil {
				if idx < 0 || idx >= len(all) {
					return fmt.Errorf("line %d: invalid stage index %d", startLine(c.Location()), idx)
				}
				s.deps = append(s.deps, all[idx])
			} else if d, ok := byName[strings.ToLower(c.From)]; ok {
				s.deps = append(s.deps, d)
			}
		case *instructions.RunCommand:
			for _, m := range instructions.GetMounts(c) {
				if d, ok := byName[strings.ToLower(m.From)]; ok && m.From != "" {
					s.deps = append(s.deps, d)
				}
			}
		}
	}
	return nil
}

// imageStages returns the stages whose filesystem becomes the image when
// building for target p: for a Windows target, the target stage and the
// stages it is FROM-based on (not those it copies from); none otherwise.
func (g *stageGraph) imageStages(p v1.Platform) map[*stage]bool {
	out := map[*stage]bool{}
	if p.OS != "windows" {
		return out
	}
	for s := g.target; s != nil; s = s.base {
		out[s] = true
	}
	return out
}

// reachable returns the stages the target depends on, in Dockerfile order.
func (g *stageGraph) reachable() []*stage {
	seen := map[*stage]bool{}
	var walk func(*stage)
	walk = func(s *stage) {
		if seen[s] {
			return
		}
		seen[s] = true
		for _, d := range s.deps {
			walk(d)
		}
	}
	walk(g.target)
	var out []*stage
	for s := range seen {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *stage) int { return a.index - b.index })
	return out
}
