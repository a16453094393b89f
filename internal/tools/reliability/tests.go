package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
)

// record is one RELIABILITY line: its key=value fields.
type record map[string]string

// testResults is what one go test -json run produced.
type testResults struct {
	records  []record
	passed   int      // top-level tests
	failed   []string // top-level and subtests
	pkgFails []string
}

var lineRe = regexp.MustCompile(`RELIABILITY ((?:\S+=\S+ ?)+)`)

// event is one line of go test -json.
type event struct {
	Action, Package, Test, Output string
}

// runTests runs the selected tests with -json and collects their records.
func runTests(ctx context.Context, pkgs []string, runRe string, race bool) (*testResults, error) {
	args := []string{"test", "-json", "-count=1", "-timeout", "20m", "-run", runRe}
	if race {
		args = append(args, "-race")
	}
	cmd := exec.CommandContext(ctx, "go", append(args, pkgs...)...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("go test: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting go test: %w", err)
	}
	res, perr := parseEvents(stdout)
	werr := cmd.Wait()
	if perr != nil {
		return nil, perr
	}
	if werr != nil && len(res.failed) == 0 && len(res.pkgFails) == 0 {
		return nil, fmt.Errorf("go test: %w", werr)
	}
	return res, nil
}

// parseEvents reads go test -json output.
func parseEvents(r io.Reader) (*testResults, error) {
	res := &testResults{}
	partial := map[string]string{} // output split across events, by test
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			continue // a build error line
		}
		switch e.Action {
		case "output":
			key := e.Package + "/" + e.Test
			text := partial[key] + e.Output
			if !strings.HasSuffix(text, "\n") {
				partial[key] = text
				continue
			}
			delete(partial, key)
			for _, m := range lineRe.FindAllStringSubmatch(text, -1) {
				res.records = append(res.records, parseRecord(m[1]))
			}
		case "pass":
			if e.Test != "" && !strings.Contains(e.Test, "/") {
				res.passed++
			}
		case "fail":
			switch {
			case e.Test != "":
				res.failed = append(res.failed, e.Package+" "+e.Test)
			default:
				res.pkgFails = append(res.pkgFails, e.Package)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading go test output: %w", err)
	}
	return res, nil
}

func parseRecord(s string) record {
	r := record{}
	for f := range strings.FieldsSeq(s) {
		if k, v, ok := strings.Cut(f, "="); ok {
			r[k] = v
		}
	}
	return r
}
