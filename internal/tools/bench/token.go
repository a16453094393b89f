package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// tokenCases are the cases re-run on a registry with token auth: basic
// auth (or none) hides what a handshake costs, a token registry shows it.
var tokenCases = []string{"merge-3", "rebase-3"}

// handshakeCounter counts what a token registry adds to a run: pings
// (GET /v2/) and 401 challenges; the token requests are BearerAuth's.
type handshakeCounter struct {
	pings, challenges atomic.Int64
}

func (h *handshakeCounter) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/v2/" {
			h.pings.Add(1)
		}
		next.ServeHTTP(&statusRecorder{ResponseWriter: w, on401: func() { h.challenges.Add(1) }}, r)
	})
}

type statusRecorder struct {
	http.ResponseWriter
	on401 func()
}

func (s *statusRecorder) WriteHeader(code int) {
	if code == http.StatusUnauthorized {
		s.on401()
	}
	s.ResponseWriter.WriteHeader(code)
}

// handshake is one run's handshake cost.
type handshake struct {
	requests, pings, tokens, challenges int64
	err                                 error
}

// tokenResult is one case's handshakes per tool.
type tokenResult struct {
	c     benchCase
	tools []string
	runs  map[string][]handshake
}

// runTokenCases runs the token cases on a fresh registry behind
// regtest.BearerAuth (tokens for anyone, as a public registry's anonymous
// pull tokens are), every tool runs times.
func runTokenCases(ctx context.Context, tools []tool, runs int, log io.Writer) ([]tokenResult, error) {
	auth := &regtest.BearerAuth{Token: "bench-token", Service: "bench"}
	hc := &handshakeCounter{}
	bc := newByteCounter()
	reg, err := regtest.Start(regtest.WithMiddleware(bc.middleware), regtest.WithMiddleware(hc.middleware),
		regtest.WithMiddleware(auth.Middleware))
	if err != nil {
		return nil, err
	}
	e := &env{reg: reg, bytes: bc}
	defer e.Close()
	for _, t := range tools {
		if err := t.Configure(ctx, reg.Host()); err != nil {
			return nil, fmt.Errorf("configuring %s: %w", t.Name(), err)
		}
	}
	return runHandshakes(ctx, e, hc, auth.TokenRequests, filter(cases(), strings.Join(tokenCases, ","), benchCase.Name), tools, runs, log)
}

// runHandshakes sets up each case on e, a registry with token auth whose
// middleware includes hc and whose token endpoint has served tokens()
// requests so far, and runs every tool runs times, each into a fresh
// repository token/<case>/<tool>-runN.
func runHandshakes(ctx context.Context, e *env, hc *handshakeCounter, tokens func() int64, cs []benchCase,
	tools []tool, runs int, log io.Writer) ([]tokenResult, error) {
	var out []tokenResult
	for _, c := range cs {
		fmt.Fprintf(log, "case %s (token auth): pushing sources\n", c.Name())
		if err := c.Setup(ctx, e); err != nil {
			return nil, fmt.Errorf("setting up %s with token auth: %w", c.Name(), err)
		}
		tr := tokenResult{c: c, runs: map[string][]handshake{}}
		for r := range runs {
			for _, t := range tools {
				tr.tools = appendOnce(tr.tools, t.Name())
				target := runTarget(e.reg.Host(), "token", c, t.Name(), r+1)
				s := sample{Err: prepareRun(ctx, e, c, target)}
				p0, c0, t0 := hc.pings.Load(), hc.challenges.Load(), tokens()
				if s.Err == nil {
					s = e.measure(func() error { return t.Run(ctx, c.Op(target)) })
				}
				h := handshake{requests: int64(s.Stats.Total()), pings: hc.pings.Load() - p0,
					challenges: hc.challenges.Load() - c0, tokens: tokens() - t0, err: s.Err}
				tr.runs[t.Name()] = append(tr.runs[t.Name()], h)
				fmt.Fprintf(log, "  %s (token) run %d/%d %-14s %d requests, %d pings, %d tokens, %d challenges %v\n",
					c.Name(), r+1, runs, t.Name(), h.requests, h.pings, h.tokens, h.challenges, errText(s.Err))
			}
		}
		out = append(out, tr)
	}
	return out, nil
}

func appendOnce(xs []string, x string) []string {
	if slices.Contains(xs, x) {
		return xs
	}
	return append(xs, x)
}

// tokenMarkdown is the report section of the token runs.
func tokenMarkdown(trs []tokenResult) string {
	if len(trs) == 0 {
		return ""
	}
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("## Handshakes under token auth\n\n")
	w("The cases %s again, on a second registry behind a token server (`regtest.BearerAuth`: every request "+
		"without the token gets a 401 challenge, the token endpoint on the registry's host hands a token to "+
		"anyone). `requests` counts everything the registry saw, challenges and token requests included; "+
		"`pings` are `GET /v2/`; `tokens` are token requests; `401s` are challenges. Medians.\n\n",
		"`"+strings.Join(tokenCases, "`, `")+"`")
	for _, tr := range trs {
		t := newTable("tool", "requests:", "pings:", "tokens:", "401s:")
		for _, name := range tr.tools {
			hs := tr.runs[name]
			m, failed := medianHandshake(hs)
			if failed == len(hs) {
				t.row(name, "failed: "+mdEscape(errText(hs[0].err)))
				continue
			}
			t.row(name, bold(m.requests), m.pings, m.tokens, m.challenges)
			if failed > 0 {
				t.row(name, fmt.Sprintf("failed %d of %d runs", failed, len(hs)))
			}
		}
		w("### %s\n\n%s\n", tr.c.Name(), t)
	}
	return b.String()
}

// medianHandshake is the per-metric median of the successful runs, and how
// many failed.
func medianHandshake(hs []handshake) (handshake, int) {
	var req, ping, tok, ch []int64
	failed := 0
	for _, h := range hs {
		if h.err != nil {
			failed++
			continue
		}
		req, ping, tok, ch = append(req, h.requests), append(ping, h.pings), append(tok, h.tokens), append(ch, h.challenges)
	}
	return handshake{requests: median(req), pings: median(ping), tokens: median(tok), challenges: median(ch)}, failed
}
