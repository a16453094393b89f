package enginegolden

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite platform/testdata/engines.json")

// TablePath is where the checked-in table lives, from this package.
const tablePath = "../../../platform/testdata/engines.json"

// RandomIndexes is how many random indexes the table holds.
const randomIndexes = 60

// TestTableIsCurrent builds every release's code, runs it on the cases, and
// fails when the checked-in table says anything else (go test -update
// rewrites it).
func TestTableIsCurrent(t *testing.T) {
	tools, err := filepath.Abs("../../tools/containerd")
	if err != nil {
		t.Fatal(err)
	}
	got, err := Generate(context.Background(), tools, t.TempDir(), Cases(randomIndexes))
	if err != nil {
		t.Fatal(err)
	}
	b, err := got.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(tablePath, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(tablePath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, want) {
		t.Fatalf("%s is not what the releases' code answers now; run go test ./internal/testing/enginegolden -update and review the diff", tablePath)
	}
}
