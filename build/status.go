package build

import (
	"context"

	"github.com/moby/buildkit/client"
)

// ForwardStatus passes the solve status from src on to dst (nil discards)
// until src is closed. With a label, each vertex is named "[label] ..."
// and its digests are made distinct per label, so that several builds
// (one per variant, one per bake target) share one progress display
// without merging their vertices.
func ForwardStatus(ctx context.Context, dst chan<- *client.SolveStatus, src <-chan *client.SolveStatus, label string) {
	forwardStatus(ctx, dst, src, label)
}
