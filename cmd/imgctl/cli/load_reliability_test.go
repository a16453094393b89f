package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// TestLoadVerify500: 500 verify runs at once, each on its own index, all
// pass, and the heap stays bounded.
func TestLoadVerify500(t *testing.T) {
	const n, maxHeapMiB = 500, 512
	reg := regtest.New(t)
	relFixture(t, reg)
	base := regtest.Must(regtest.Must(regtest.MultiOSIndex())(t).IndexManifest())(t)
	// The indexes are served raw rather than pushed, to keep the setup
	// short; their children are the fixture's, read from the registry.
	raw := &regtest.RawContent{}
	for i := range n {
		im := *base
		im.Annotations = map[string]string{"org.opencontainers.image.version": strconv.Itoa(i)}
		raw.Manifest("src/app", fmt.Sprintf("load-%d", i), string(types.OCIImageIndex), regtest.Must(json.Marshal(im))(t))
	}
	reg.SetMiddleware(raw.Middleware)

	stop, peak := sampleHeap()
	start := time.Now()
	var wg sync.WaitGroup
	var failed atomic.Int64
	for i := range n {
		wg.Go(func() {
			var out, errOut bytes.Buffer
			ref := fmt.Sprintf("%s/src/app:load-%d", reg.Host(), i)
			if code := Execute(context.Background(), []string{"verify", ref}, strings.NewReader(""), &out, &errOut); code != 0 {
				failed.Add(1)
				t.Errorf("%s: exit %d %.300s", ref, code, errOut.String())
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	stop()
	peakMiB := peak() >> 20
	regtest.LogMetric(t, "load-verify-concurrent", strconv.Itoa(n))
	regtest.LogMetric(t, "load-verify-failed", strconv.FormatInt(failed.Load(), 10))
	regtest.LogMetric(t, "load-verify-seconds", strconv.FormatFloat(elapsed.Seconds(), 'f', 1, 64))
	regtest.LogMetric(t, "load-verify-heap-inuse-peak-mib", strconv.FormatUint(peakMiB, 10))
	t.Logf("%d verify runs in %s, %d failed, peak HeapInuse %d MiB, %s", n, elapsed, failed.Load(), peakMiB, reg.Stats())
	if peakMiB > maxHeapMiB {
		t.Errorf("peak HeapInuse %d MiB, over %d MiB", peakMiB, maxHeapMiB)
	}
}

// sampleHeap samples HeapInuse every 20ms until stop is called; peak
// returns the highest sample.
func sampleHeap() (stop func(), peak func() uint64) {
	var max atomic.Uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	sample := func() {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		if m.HeapInuse > max.Load() {
			max.Store(m.HeapInuse)
		}
	}
	go func() {
		defer close(finished)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			sample()
			select {
			case <-done:
				sample()
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(done); <-finished }, max.Load
}
