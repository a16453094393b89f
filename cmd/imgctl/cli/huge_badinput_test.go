package cli

import (
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// TestHugeIndex: an index of 10,000 entries, pointing at the four images
// of the fixture over and over, is read in bounded time and memory by
// every command, which answers with an exit code of the contract.
func TestHugeIndex(t *testing.T) {
	const n = 10_000
	reg := regtest.New(t)
	relFixture(t, reg)
	body := badIndex(t, func(m map[string]any, d []map[string]any) {
		var all []any
		for i := range n {
			all = append(all, d[i%4])
		}
		m["manifests"] = all
	})
	raw := &regtest.RawContent{}
	raw.Manifest("src", "huge", ociIndex, body)
	reg.SetMiddleware(raw.Middleware)
	ref := reg.Host() + "/src:huge"
	for _, args := range [][]string{
		{"verify", ref},
		{"resolve", ref, "--platform", "windows/amd64:10.0.26100.1"},
		{"inspect", ref},
		{"index", "create", "-t", reg.Host() + "/out:huge", ref},
	} {
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		out, errOut, code := relRun(t, args...)
		d := time.Since(start)
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		allocMiB := (after.TotalAlloc - before.TotalAlloc) >> 20
		ok := code >= 0 && code <= 2 && d < 60*time.Second && (code != ExitError || strings.HasPrefix(errOut, "imgctl: "))
		regtest.LogBadInput(t, "index-of-10000-entries", args[0], code, ok)
		regtest.LogMetric(t, "huge-index-"+args[0]+"-seconds", strconv.FormatFloat(d.Seconds(), 'f', 1, 64))
		regtest.LogMetric(t, "huge-index-"+args[0]+"-alloc-mib", strconv.FormatUint(allocMiB, 10))
		t.Logf("%s: exit %d in %s, %d MiB allocated: %.300s", args[0], code, d, allocMiB, errOut)
		if !ok {
			t.Errorf("%s: exit %d in %s\n%.500s\n%.500s", args[0], code, d, out, errOut)
		}
	}
}
