package cli

import (
	"io"
	"sync"
)

// lockedWriter serialises the writes of several goroutines to one writer:
// during a build, BuildKit's progress display, the slog logger (solving,
// pre-mounting) and the notes all write to stderr at once. A file takes
// that (and stays unwrapped, so that progressui can tell a terminal), but a
// caller of Execute may pass an io.Writer that does not (a bytes.Buffer in
// tests and in internal/tools/release). Hand-written: the
// standard library has no synchronised io.Writer, and slog and progressui
// each lock only their own writes.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
