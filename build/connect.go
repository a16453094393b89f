package build

import (
	"context"
	"errors"
	"fmt"

	"github.com/moby/buildkit/client"
	digest "github.com/opencontainers/go-digest"
	"golang.org/x/sync/errgroup"

	"github.com/imgctl/imgctl/build/nodes"
)

// connections are a build's open clients: one per distinct daemon, shared
// by the variants that daemon solves.
type connections struct {
	// clients and workers are per variant; workers are listed only for
	// variants mapped to a Windows node.
	clients []*client.Client
	workers [][]*client.WorkerInfo
	// several is true when the variants are solved on more than one daemon.
	several bool
	open    []*client.Client
}

// connect dials every distinct daemon of the plan concurrently. On error
// it closes what it opened.
func (p *Plan) connect(ctx context.Context) (*connections, error) {
	bs, idx := distinctBuilders(p.Assignments)
	open := make([]*client.Client, len(bs))
	listed := make([][]*client.WorkerInfo, len(bs))
	needWorkers := make([]bool, len(bs))
	for i, a := range p.Assignments {
		needWorkers[idx[i]] = needWorkers[idx[i]] || a.Windows
	}
	var g errgroup.Group // each Connect is bounded by its ping timeout
	for j, b := range bs {
		g.Go(func() error {
			c, err := nodes.Connect(ctx, b)
			if err != nil {
				return err
			}
			open[j] = c
			if !needWorkers[j] {
				return nil
			}
			if listed[j], err = c.ListWorkers(ctx); err != nil {
				return fmt.Errorf("%w at %s: listing workers: %w", nodes.ErrNoBuilder, b, err)
			}
			return nil
		})
	}
	err := g.Wait()
	cs := &connections{several: len(bs) > 1}
	for _, c := range open {
		if c != nil {
			cs.open = append(cs.open, c)
		}
	}
	if err != nil {
		_ = cs.close()
		return nil, err
	}
	for i := range p.Assignments {
		cs.clients = append(cs.clients, open[idx[i]])
		cs.workers = append(cs.workers, listed[idx[i]])
	}
	return cs, nil
}

// distinctBuilders returns the distinct daemons of the assignments, by
// address in first-use order, and the index into it of every assignment.
func distinctBuilders(as []nodes.Assignment) ([]nodes.Builder, []int) {
	var bs []nodes.Builder
	idx := make([]int, len(as))
	for i, a := range as {
		j := 0
		for j < len(bs) && bs[j].Addr != a.Builder.Addr {
			j++
		}
		if j == len(bs) {
			bs = append(bs, a.Builder)
		}
		idx[i] = j
	}
	return bs, idx
}

// close closes every open client.
func (cs *connections) close() error {
	var errs []error
	for _, c := range cs.open {
		errs = append(errs, c.Close())
	}
	cs.open = nil
	return errors.Join(errs...)
}

// relabel prefixes every vertex name of s with [label] and moves its
// vertex digests into the label's own space, so that one progress display
// fed by several daemons tells their vertices apart even when two daemons
// run the same step. s must not be shared: the BuildKit client sends a new
// SolveStatus per message.
func relabel(s *client.SolveStatus, label string) {
	d := func(x digest.Digest) digest.Digest {
		if x == "" {
			return x
		}
		return digest.FromString(label + "\x00" + x.String())
	}
	for _, v := range s.Vertexes {
		v.Digest, v.Name = d(v.Digest), "["+label+"] "+v.Name
		for i, in := range v.Inputs {
			v.Inputs[i] = d(in)
		}
	}
	for _, st := range s.Statuses {
		st.Vertex = d(st.Vertex)
	}
	for _, l := range s.Logs {
		l.Vertex = d(l.Vertex)
	}
	for _, w := range s.Warnings {
		w.Vertex = d(w.Vertex)
	}
}
