package transport

import (
	"context"
	"sync"
	"time"
)

// pauses is the Retry-After a registry asked for, shared by every request
// of the run: a 429 or 503 with Retry-After from one registry holds back
// every worker that talks to it until the wait is over, not just the one
// that got it (imgctl patch runs many images at once over one client).
// go-containerregistry's retry is per request, so this sits beside it in
// the guard transport.
type pauses struct {
	mu    sync.Mutex
	until map[string]time.Time // by registry host
}

// hold records that host asked for wait from now on.
func (p *pauses) hold(host string, wait time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.until == nil {
		p.until = map[string]time.Time{}
	}
	if t := time.Now().Add(wait); t.After(p.until[host]) {
		p.until[host] = t
	}
}

// wait blocks until host's pause is over or ctx is done.
func (p *pauses) wait(ctx context.Context, host string) error {
	p.mu.Lock()
	d := time.Until(p.until[host])
	p.mu.Unlock()
	if d <= 0 {
		return nil
	}
	return sleep(ctx, d)
}
