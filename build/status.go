package build

import (
	"context"
	"sync"

	"github.com/moby/buildkit/client"
)

// StatusTo returns the status channel of one solve or build: what is sent
// on it is passed on to dst (nil discards) by a goroutine that fwd counts,
// until the solve closes it; wait for fwd after the solve. With a label,
// each vertex is named "[label] ..." and its digests are made distinct
// per label (see relabel), so that several builds (one per variant, one
// per bake target) share one progress display without merging their
// vertices.
func StatusTo(ctx context.Context, fwd *sync.WaitGroup, dst chan<- *client.SolveStatus, label string) chan *client.SolveStatus {
	ch := make(chan *client.SolveStatus)
	fwd.Go(func() { forwardStatus(ctx, dst, ch, label) })
	return ch
}

// forwardStatus passes the status from src on to dst (nil discards) until
// src is closed, each vertex under label when label is set.
func forwardStatus(ctx context.Context, dst chan<- *client.SolveStatus, src <-chan *client.SolveStatus, label string) {
	for s := range src {
		if dst == nil {
			continue
		}
		if label != "" {
			relabel(s, label)
		}
		select { // a caller that stopped drawing must not block the solve
		case dst <- s:
		case <-ctx.Done():
		}
	}
}
