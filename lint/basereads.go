package lint

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/distribution/reference"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/moby/buildkit/frontend/dockerfile/instructions"
)

// BaseFileRead is an instruction that reads files of an image's base: a
// COPY --from (or RUN --mount=from) of the base image itself, or of a stage
// built FROM it.
type BaseFileRead struct {
	// Line is the instruction's line.
	Line int
	// Stage is the stage the instruction is in.
	Stage string
	// From is what --from names.
	From string
}

// String says what reads the base, for a note.
func (r BaseFileRead) String() string {
	return fmt.Sprintf("line %d: --from=%s in stage %q reads files of the base", r.Line, r.From, r.Stage)
}

// BaseFileReads returns the instructions of the stages the target needs,
// when building for platform p, that read files of the image base (a
// reference as FinalBase.Name gives it): a COPY --from or RUN
// --mount=from naming the image, or naming a stage whose FROM chain ends
// at it. The stages FROM base and COPY onto it read nothing of it; these
// instructions do.
func BaseFileReads(dockerfile []byte, file string, opts Options, p v1.Platform, base string) ([]BaseFileRead, error) {
	df, err := parseDockerfile(dockerfile, file)
	if err != nil {
		return nil, err
	}
	g, err := df.resolve(p, opts)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidDockerfile, file, err)
	}
	want := normalName(base)
	builtOnBase := func(s *stage) bool {
		for s.base != nil {
			s = s.base
		}
		return normalName(s.baseName) == want
	}
	byName := map[string]*stage{}
	for _, s := range g.stages {
		if s.st.Name != "" {
			byName[strings.ToLower(s.st.Name)] = s
		}
	}
	reads := func(from string) bool {
		if idx, err := strconv.Atoi(from); err == nil && idx >= 0 && idx < len(g.stages) {
			return builtOnBase(g.stages[idx])
		}
		if s, ok := byName[strings.ToLower(from)]; ok {
			return builtOnBase(s)
		}
		return normalName(from) == want
	}
	var out []BaseFileRead
	for _, s := range g.reachable() {
		for _, cmd := range s.st.Commands {
			var froms []string
			switch c := cmd.(type) {
			case *instructions.CopyCommand:
				froms = append(froms, c.From)
			case *instructions.RunCommand:
				for _, m := range instructions.GetMounts(c) {
					froms = append(froms, m.From)
				}
			}
			for _, from := range froms {
				if from != "" && reads(from) {
					out = append(out, BaseFileRead{Line: startLine(cmd.Location()), Stage: s.name, From: from})
				}
			}
		}
	}
	return out, nil
}

// normalName is ref in BuildKit's normalised form (docker.io/library/
// prefixes added), or ref itself when it does not parse.
func normalName(ref string) string {
	n, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return ref
	}
	return reference.TagNameOnly(n).String()
}
