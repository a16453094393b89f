package main

import (
	"bytes"
	"context"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

type fuzzTarget struct{ pkg, name string }

// fuzzResult is one fuzz target's run.
type fuzzResult struct {
	fuzzTarget
	took   time.Duration
	execs  int64
	seeds  int // corpus entries go test reports as the baseline
	passed bool
	note   string
	output string
}

var (
	execsRe = regexp.MustCompile(`execs: (\d+)`)
	seedsRe = regexp.MustCompile(`gathering baseline coverage: \d+/(\d+) completed`)
)

// runFuzz runs one target with -fuzz for d, on one worker to leave CPU for
// other work on the machine.
func runFuzz(ctx context.Context, ft fuzzTarget, d time.Duration) fuzzResult {
	cmd := exec.CommandContext(ctx, "go", "test", "-run", "^$", "-fuzz", "^"+ft.name+"$",
		"-fuzztime", d.String(), "-parallel", "1", ft.pkg)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	r := fuzzResult{fuzzTarget: ft, took: time.Since(start), passed: err == nil, output: out.String()}
	// On a loaded machine the fuzz coordinator can stop on its own deadline
	// ("context deadline exceeded") without any failing input: that is the
	// end of the run, not a finding.
	if err != nil && strings.Contains(r.output, "context deadline exceeded") && !strings.Contains(r.output, "Failing input") {
		r.passed, r.note = true, "ended by the fuzz deadline"
	}
	if m := execsRe.FindAllStringSubmatch(r.output, -1); len(m) > 0 {
		r.execs, _ = strconv.ParseInt(m[len(m)-1][1], 10, 64)
	}
	if m := seedsRe.FindStringSubmatch(r.output); m != nil {
		r.seeds, _ = strconv.Atoi(m[1])
	}
	return r
}
