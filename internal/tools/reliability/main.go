// Command reliability runs imgctl's fault, bad-input, security and load
// tests with `go test -json`, counts the machine-readable RELIABILITY lines
// they log, runs every fuzz target for a set time, and writes the figures to
// RELIABILITY.md. No figure in that file is written by hand.
//
//	go run ./internal/tools/reliability -fuzztime 30s -o RELIABILITY.md
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"
)

// testPackages hold the reliability tests; testRun selects them.
var testPackages = []string{"./internal/testing/regtest", "./registry", "./cmd/imgctl/cli", "./verify", "./platform", "./build", "./lint"}

const testRun = "Fault|Bearer|Bad|Credentials|HugeIndex|LoadVerify|LintBad|TLS|PlainHTTP|RetryAfter|ManifestTooLarge|DigestMismatch|Retryable|Fuzz"

// fuzzTargets are every go test -fuzz target, by package.
var fuzzTargets = []fuzzTarget{
	{"./platform", "FuzzParse"}, {"./platform", "FuzzParseVersion"}, {"./platform", "FuzzSelect"},
	{"./lint", "FuzzPreflight"}, {"./verify", "FuzzEvaluate"},
}

func main() {
	out := flag.String("o", "RELIABILITY.md", "report file")
	fuzztime := flag.Duration("fuzztime", 30*time.Second, "time per fuzz target (0 skips fuzzing)")
	race := flag.Bool("race", true, "run the tests with the race detector")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *out, *fuzztime, *race); err != nil {
		fmt.Fprintln(os.Stderr, "reliability:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out string, fuzztime time.Duration, race bool) error {
	start := time.Now()
	tr, err := runTests(ctx, testPackages, testRun, race)
	if err != nil {
		return err
	}
	var fuzz []fuzzResult
	if fuzztime > 0 {
		for _, ft := range fuzzTargets {
			fmt.Fprintf(os.Stderr, "fuzzing %s %s for %s\n", ft.pkg, ft.name, fuzztime)
			fuzz = append(fuzz, runFuzz(ctx, ft, fuzztime))
		}
	}
	r := &report{tests: tr, fuzz: fuzz, fuzztime: fuzztime, race: race, took: time.Since(start), commands: listCommands(ctx)}
	if err := os.WriteFile(out, []byte(r.markdown()), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	fmt.Fprintf(os.Stderr, "wrote %s: %s\n", out, r.summary())
	if !r.ok() {
		return fmt.Errorf("failures: %s", r.summary())
	}
	return nil
}
