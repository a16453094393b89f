package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// startupRuns is how often each build tool's `--help` is timed.
const startupRuns = 15

// measureStartup times `TOOL --help` for each build tool (the tools
// alternating) and returns the medians by tool name: the part of every
// build's wall time that is process start-up alone, whatever the build.
func measureStartup(ctx context.Context, tools []tool) (map[string]time.Duration, error) {
	type execer interface {
		exec(context.Context, ...string) (string, error)
	}
	samples := map[string][]time.Duration{}
	for range startupRuns {
		for _, t := range tools {
			x, ok := t.(execer)
			if !ok || strings.Contains(t.Name(), "+") { // imgctl+verify is the same binary
				continue
			}
			start := time.Now()
			if _, err := x.exec(ctx, "--help"); err != nil {
				return nil, fmt.Errorf("%s --help: %w", t.Name(), err)
			}
			samples[t.Name()] = append(samples[t.Name()], time.Since(start))
		}
	}
	out := map[string]time.Duration{}
	for n, s := range samples {
		slices.Sort(s)
		out[n] = s[len(s)/2]
	}
	return out, nil
}

// startupLine reports measureStartup's medians in tool order.
func (r *buildReport) startupLine() string {
	var parts []string
	for _, t := range r.tools {
		if d, ok := r.startup[t.Name()]; ok {
			parts = append(parts, fmt.Sprintf("%s %s", t.Name(), fmtWall(d)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("Process start-up alone (`TOOL --help`, median of %d, timed before the cases): %s; "+
		"this part of the wall time is paid once per run, whatever the build.", startupRuns, strings.Join(parts, ", "))
}
