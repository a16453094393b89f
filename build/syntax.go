package build

import (
	"bytes"

	"github.com/moby/buildkit/frontend/dockerfile/parser"
)

// StripSyntax blanks a `# syntax=` (or `// syntax=`) directive so that
// BuildKit's built-in Dockerfile frontend builds the file itself instead of
// pulling a frontend image. The directive's line becomes an empty comment,
// so every other line keeps its number. It returns the Dockerfile, the
// frontend reference the directive named, and whether it found one.
func StripSyntax(dockerfile []byte) ([]byte, string, bool) {
	ref, _, loc, ok := parser.DetectSyntax(dockerfile)
	if !ok || len(loc) == 0 {
		return dockerfile, "", false
	}
	lines := bytes.SplitAfter(dockerfile, []byte("\n"))
	n := loc[0].Start.Line - 1 // parser lines are 1-based
	if n < 0 || n >= len(lines) {
		return dockerfile, "", false
	}
	line := lines[n]
	prefix := []byte("#")
	if bytes.HasPrefix(bytes.TrimLeft(line, " \t\ufeff"), []byte("//")) {
		prefix = []byte("//")
	}
	eol := line[len(bytes.TrimRight(line, "\r\n")):]
	out := make([][]byte, len(lines))
	copy(out, lines)
	out[n] = append(append([]byte{}, prefix...), eol...)
	return bytes.Join(out, nil), ref, true
}
