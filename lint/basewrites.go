package lint

import (
	"fmt"
	"path"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/moby/buildkit/frontend/dockerfile/instructions"
)

// BaseWrites are the paths that the stages built FROM a base write when
// building for one platform: each COPY and ADD destination and each
// WORKDIR, as the frontend resolves them against the stage's working
// directory. A graft needs the base's directory tree only along these
// paths (build/skeleton prunes a graft's placeholder to them). Known is false, and
// Reason says why, when a path cannot be known from the Dockerfile alone.
type BaseWrites struct {
	// Known reports whether every written path is known.
	Known bool
	// Reason is why not.
	Reason string
	stages []writeStage
}

// writeStage is one stage built on the base: the stage it is FROM
// (-1: the base itself) and its writes in order.
type writeStage struct {
	parent int
	steps  []writeStep
}

// writeStep is a WORKDIR (which moves the working directory) or a COPY or
// ADD destination.
type writeStep struct {
	workdir bool
	path    string
}

// BaseFileWrites returns the writes of the stages the target needs, when
// building for platform p, whose FROM chain ends at the image base (a
// reference as FinalBase.Name gives it). Destinations are taken as the
// Dockerfile writes them: one that names a variable (expanded from the
// stage's environment, which includes the base's) or a RUN makes the writes
// unknown.
func BaseFileWrites(dockerfile []byte, file string, opts Options, p v1.Platform, base string) (BaseWrites, error) {
	df, err := parseDockerfile(dockerfile, file)
	if err != nil {
		return BaseWrites{}, err
	}
	g, err := df.resolve(p, opts)
	if err != nil {
		return BaseWrites{}, fmt.Errorf("%w: %s: %w", ErrInvalidDockerfile, file, err)
	}
	reachable := map[*stage]bool{}
	for _, s := range g.reachable() {
		reachable[s] = true
	}
	want := normalName(base)
	index := map[*stage]int{} // stage -> its place in w.stages
	w := BaseWrites{Known: true}
	for _, s := range g.stages { // a stage comes after the stage it is FROM
		parent := -1
		if s.base != nil {
			i, ok := index[s.base]
			if !ok {
				continue // not built on the base
			}
			parent = i
		} else if normalName(s.baseName) != want {
			continue
		}
		index[s] = len(w.stages)
		ws := writeStage{parent: parent}
		if reachable[s] {
			for _, cmd := range s.st.Commands {
				var step writeStep
				switch c := cmd.(type) {
				case *instructions.WorkdirCommand:
					step = writeStep{workdir: true, path: c.Path}
				case *instructions.CopyCommand:
					step = writeStep{path: c.DestPath}
				case *instructions.AddCommand:
					step = writeStep{path: c.DestPath}
				case *instructions.RunCommand:
					w.unknown(fmt.Sprintf("line %d: RUN in stage %q", startLine(cmd.Location()), s.name))
					continue
				default:
					continue
				}
				if strings.Contains(step.path, "$") {
					w.unknown(fmt.Sprintf("line %d: %q names a variable", startLine(cmd.Location()), step.path))
				}
				ws.steps = append(ws.steps, step)
			}
		}
		w.stages = append(w.stages, ws)
	}
	return w, nil
}

func (w *BaseWrites) unknown(reason string) {
	if w.Known {
		w.Known, w.Reason = false, reason
	}
}

// Paths are the written paths, absolute, slash-separated, without a drive
// letter (C:\app\ is /app), with the base's working directory
// baseWorkdir (its config's WorkingDir) as the first stage's; each stage
// starts in its parent stage's last working directory. ok is false when
// the writes are not Known.
func (w BaseWrites) Paths(baseWorkdir string) (paths []string, ok bool) {
	if !w.Known {
		return nil, false
	}
	final := make([]string, len(w.stages))
	for i, s := range w.stages {
		cur := WindowsPath("/", baseWorkdir)
		if s.parent >= 0 {
			cur = final[s.parent]
		}
		for _, st := range s.steps {
			p := WindowsPath(cur, st.path)
			paths = append(paths, p)
			if st.workdir {
				cur = p
			}
		}
		final[i] = cur
	}
	return paths, true
}

// WindowsPath is p, a path of a Windows stage, as the Dockerfile frontend
// resolves it against the working directory cwd: backslashes as slashes,
// the drive letter dropped, relative to cwd unless absolute, cleaned.
func WindowsPath(cwd, p string) string {
	p = strings.ReplaceAll(p, `\`, "/")
	if len(p) >= 2 && p[1] == ':' {
		p = p[2:]
	}
	if p == "" {
		p = "."
	}
	if !path.IsAbs(p) {
		p = path.Join(WindowsPath("/", cwd), p)
	}
	return path.Clean(p)
}
