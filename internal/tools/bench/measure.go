package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/snapshot"
)

// byteCounter is a registry middleware (regtest.WithMiddleware) that counts
// the body bytes a client moves, split into manifests, config blobs and
// layer blobs. regtest.Stats counts blob bytes but cannot tell a config from
// a layer: a merge has to read configs (for os.version), never layers.
type byteCounter struct {
	mu       sync.Mutex
	configs  map[string]bool  // digests known to be config blobs
	sessions map[string]int64 // upload path -> bytes received so far
	uploaded map[string]int64 // blobs of unknown digest uploaded this run, counted as layers
	fetched  map[string]int64 // blob bytes served by GET this run, by fetchKey
	b        byteCounts
	trace    []string // one line per request, when tracing
	tracing  bool
}

// byteCounts are the body bytes in both directions since the last reset.
type byteCounts struct {
	Manifest int64 // GET manifest responses and PUT manifest requests
	Config   int64 // config blobs and in-toto statements downloaded or uploaded
	Layer    int64 // any other blob downloaded or uploaded
}

func newByteCounter() *byteCounter {
	return &byteCounter{configs: map[string]bool{}, sessions: map[string]int64{}, uploaded: map[string]int64{}, fetched: map[string]int64{}}
}

// markConfig records that digest d is a config blob, not a layer.
func (c *byteCounter) markConfig(d string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.configs[d] = true
}

func (c *byteCounter) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.b = byteCounts{}
	c.trace = nil
	clear(c.sessions)
	clear(c.uploaded)
	clear(c.fetched)
}

// fetchKey keys the bytes of a blob GET: the digest, prefixed with
// "builder " for BuildKit (its User-Agent) and "client " for anyone else.
func fetchKey(req *http.Request, digest string) string {
	if strings.HasPrefix(req.UserAgent(), "buildkit/") {
		return "builder " + digest
	}
	return "client " + digest
}

// blobFlows returns the blob bytes served (GET, by fetchKey) and uploaded
// (sessions closed with a digest that is not a known config, by digest)
// since the last reset.
func (c *byteCounter) blobFlows() (fetched, uploaded map[string]int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.fetched), maps.Clone(c.uploaded)
}

// setTracing turns the per-request log on or off.
func (c *byteCounter) setTracing(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tracing = on
}

// takeTrace returns the requests logged since the last reset.
func (c *byteCounter) takeTrace() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.trace
}

// snapshot returns the counts; bytes of unfinished uploads count as layer bytes.
func (c *byteCounter) snapshot() byteCounts {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.b
	for _, n := range c.sessions {
		b.Layer += n
	}
	return b
}

// add attributes n blob bytes to the config or layer count by digest.
func (c *byteCounter) add(digest string, n int64) {
	if c.configs[digest] {
		c.b.Config += n
	} else {
		c.b.Layer += n
	}
}

// apiPath splits /v2/<repo>/<kind>/<rest> into kind ("manifests", "blobs",
// "uploads") and the last path element.
func apiPath(p string) (kind, last string) {
	if !strings.HasPrefix(p, "/v2/") {
		return "", ""
	}
	last = p[strings.LastIndex(p, "/")+1:]
	switch {
	case strings.Contains(p, "/blobs/uploads"):
		return "uploads", last
	case strings.Contains(p, "/manifests/"):
		return "manifests", last
	case strings.Contains(p, "/blobs/"):
		return "blobs", last
	}
	return "", last
}

func (c *byteCounter) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		kind, last := apiPath(req.URL.Path)
		var body *countingBody
		if req.Body != nil && (req.Method == http.MethodPut || req.Method == http.MethodPatch || req.Method == http.MethodPost) {
			body = &countingBody{ReadCloser: req.Body, keep: kind == "manifests"}
			req.Body = body
		}
		cw := &regtest.CountingWriter{ResponseWriter: w}
		next.ServeHTTP(cw, req)

		c.mu.Lock()
		defer c.mu.Unlock()
		var in int64
		if body != nil {
			in = body.n
		}
		if c.tracing {
			c.trace = append(c.trace, fmt.Sprintf("%-6s %3d %8d %8d %s", req.Method, cw.Status(), in, cw.Bytes(), req.URL.RequestURI()))
		}
		switch kind {
		case "manifests":
			if req.Method == http.MethodGet {
				c.b.Manifest += cw.Bytes()
			}
			c.b.Manifest += in
			if body != nil {
				c.reclassify(body.buf.Bytes())
			}
		case "blobs":
			if req.Method == http.MethodGet {
				c.add(last, cw.Bytes())
				c.fetched[fetchKey(req, last)] += cw.Bytes()
			}
		case "uploads":
			digest := req.URL.Query().Get("digest")
			switch {
			case digest != "" && (req.Method == http.MethodPut || req.Method == http.MethodPost):
				// The final PUT of a session, or a monolithic POST.
				c.add(digest, c.sessions[req.URL.Path]+in)
				if !c.configs[digest] {
					c.uploaded[digest] += c.sessions[req.URL.Path] + in
				}
				delete(c.sessions, req.URL.Path)
			case req.Method == http.MethodPost:
				// A new session or a mount: no blob bytes, normally.
				c.b.Layer += in
			default:
				// PATCH chunks, counted until the PUT names the digest.
				c.sessions[req.URL.Path] += in
			}
		}
	})
}

// countingBody counts request body bytes and, with keep, keeps them.
type countingBody struct {
	io.ReadCloser
	n    int64
	keep bool
	buf  bytes.Buffer
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	if b.keep {
		b.buf.Write(p[:n])
	}
	return n, err
}

// reclassify moves the bytes of an uploaded blob from layers to configs
// when a manifest PUT names it as its config: a rebase uploads new configs
// whose digests are unknown until then.
func (c *byteCounter) reclassify(manifest []byte) {
	type desc struct {
		MediaType string `json:"mediaType"`
		Digest    string `json:"digest"`
	}
	var m struct {
		Config desc   `json:"config"`
		Layers []desc `json:"layers"`
	}
	if json.Unmarshal(manifest, &m) != nil || m.Config.Digest == "" {
		return
	}
	meta := []string{m.Config.Digest}
	// An attestation's in-toto statement (imgctl rebase writes one per
	// rebased variant) is metadata like a config, not image content: it
	// counts with the configs, so that "layer bytes" stays image layers.
	for _, l := range m.Layers {
		if l.MediaType == snapshot.InTotoMediaType {
			meta = append(meta, l.Digest)
		}
	}
	for _, d := range meta {
		if n, ok := c.uploaded[d]; ok {
			c.b.Layer -= n
			c.b.Config += n
			delete(c.uploaded, d)
		}
		c.configs[d] = true
	}
}

// benchRegistry is the registry cases run on: regtest's in-process one, or
// the CNCF distribution registry (distRegistry in dist.go).
type benchRegistry interface {
	Host() string
	// Ref parses "repo:tag" or "repo@digest" as a reference on the registry.
	Ref(s string) (name.Reference, error)
	// Stats counts the requests since the last ResetStats.
	Stats() regtest.Stats
	ResetStats()
	Close()
}

// env is one benchmark registry with its byte accounting.
type env struct {
	reg   benchRegistry
	bytes *byteCounter
	// auth is what the bench itself (pushing sources, checking results)
	// authenticates with; nil is anonymous.
	auth authn.Authenticator
}

// remote returns the options the bench itself pushes and reads with.
func (e *env) remote(ctx context.Context) []remote.Option {
	return authOptions(ctx, e.auth)
}

// authOptions returns go-containerregistry options with ctx and auth
// (nil: anonymous).
func authOptions(ctx context.Context, auth authn.Authenticator) []remote.Option {
	opts := []remote.Option{remote.WithContext(ctx)}
	if auth != nil {
		opts = append(opts, remote.WithAuth(auth))
	}
	return opts
}

// push pushes an image or index to ref with the bench's credentials.
func (e *env) push(ctx context.Context, ref name.Reference, x any) error {
	_, err := regtest.Push(ref, x, e.remote(ctx)...)
	return err
}

// startEnv starts an in-process registry with byte accounting.
func startEnv() (*env, error) {
	bc := newByteCounter()
	reg, err := regtest.Start(regtest.WithMiddleware(bc.middleware))
	if err != nil {
		return nil, err
	}
	return &env{reg: reg, bytes: bc}, nil
}

func (e *env) Close() { e.reg.Close() }

// sample is what one measured run cost.
type sample struct {
	Stats regtest.Stats
	Bytes byteCounts
	Wall  time.Duration
	Err   error
	Trace []string // "METHOD status in out URI" per request, with -trace
}

// runTally counts a row's runs: those that succeeded, those that failed,
// and the first failure's error.
type runTally struct {
	ok, failed int
	firstErr   error
}

// tallyRuns returns the runs whose sample (as sampleOf reads it) has no
// error, and the tally of all of them.
func tallyRuns[R any](runs []R, sampleOf func(R) sample) ([]R, runTally) {
	var ok []R
	var t runTally
	for _, r := range runs {
		if err := sampleOf(r).Err; err != nil {
			t.failed++
			if t.firstErr == nil {
				t.firstErr = err
			}
			continue
		}
		t.ok++
		ok = append(ok, r)
	}
	return ok, t
}

// measure resets the accounting, runs fn, and returns what fn cost. Only
// requests made while fn runs are counted, so callers check results after.
func (e *env) measure(fn func() error) sample {
	e.reg.ResetStats()
	e.bytes.reset()
	start := time.Now()
	err := fn()
	wall := time.Since(start)
	return sample{Stats: e.reg.Stats(), Bytes: e.bytes.snapshot(), Wall: wall, Err: err, Trace: e.bytes.takeTrace()}
}

// median returns the median of xs (the lower middle for an even count).
func median[T int | int64 | time.Duration](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

// summary is the per-metric median of several samples.
type summary struct {
	Runs, Failed                int
	Get, Head, Put, Post, Patch int
	Total, Mounts               int
	Manifest, Config, Layer     int64
	MaxLayer                    int64
	Wall                        time.Duration
	FirstErr                    error
}

// summarize takes the median of each metric over the successful samples.
func summarize(ss []sample) summary {
	var (
		sum                                        summary
		get, head, put, post, patch, total, mounts []int
		manifest, config, layer                    []int64
		wall                                       []time.Duration
	)
	sum.Runs = len(ss)
	for _, s := range ss {
		if s.Err != nil {
			sum.Failed++
			if sum.FirstErr == nil {
				sum.FirstErr = s.Err
			}
			continue
		}
		get, head, put = append(get, s.Stats.Get), append(head, s.Stats.Head), append(put, s.Stats.Put)
		post, patch = append(post, s.Stats.Post), append(patch, s.Stats.Patch)
		total, mounts = append(total, s.Stats.Total()), append(mounts, s.Stats.Mounts)
		manifest, config = append(manifest, s.Bytes.Manifest), append(config, s.Bytes.Config)
		layer, wall = append(layer, s.Bytes.Layer), append(wall, s.Wall)
		sum.MaxLayer = max(sum.MaxLayer, s.Bytes.Layer)
	}
	sum.Get, sum.Head, sum.Put, sum.Post, sum.Patch = median(get), median(head), median(put), median(post), median(patch)
	sum.Total, sum.Mounts = median(total), median(mounts)
	sum.Manifest, sum.Config, sum.Layer = median(manifest), median(config), median(layer)
	sum.Wall = median(wall)
	return sum
}

// ok reports whether at least one run succeeded and none failed.
func (s summary) ok() bool { return s.Runs > 0 && s.Failed == 0 }
