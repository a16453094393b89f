package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"

	dockerconfig "github.com/docker/cli/cli/config"
	"github.com/docker/cli/cli/config/types"

	"github.com/imgctl/imgctl/internal/testing/disttest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// distRegistry is the CNCF distribution registry (internal/testing/disttest) as a
// bench registry: its proxy records every request, and Stats counts them
// as regtest counts its own.
type distRegistry struct{ *disttest.Registry }

// Stats counts the requests recorded since the last ResetStats by method
// and kind, and as mounts the POSTs with a mount query that answered 201.
func (r distRegistry) Stats() regtest.Stats {
	var s regtest.Stats
	for _, q := range r.Requests() {
		s.Count(q.Method, q.Path)
		if q.Method == http.MethodPost && q.Status == http.StatusCreated && strings.Contains(q.Query, "mount=") {
			s.Mounts++
		}
	}
	return s
}

// ResetStats forgets the recorded requests.
func (r distRegistry) ResetStats() { r.ResetRequests() }

// distEnv is a bench env on a distribution registry, with the handshake
// counter (pings and 401s) that the token runs report.
type distEnv struct {
	*env
	dist *disttest.Registry
	hc   *handshakeCounter
}

// startDistEnv starts a distribution registry with htpasswd auth, or with
// the proxy's bearer-token handshake in front of it (disttest Options.Token),
// and puts the byte and handshake counters in its proxy. The bench pushes
// sources and checks results with the registry's credentials.
func startDistEnv(token bool) (*distEnv, error) {
	reg, err := disttest.Start(disttest.Options{Token: token})
	if err != nil {
		return nil, err
	}
	bc, hc := newByteCounter(), &handshakeCounter{}
	reg.SetMiddleware(func(next http.Handler) http.Handler { return bc.middleware(hc.middleware(next)) })
	return &distEnv{env: &env{reg: distRegistry{reg}, bytes: bc, auth: reg.Auth()}, dist: reg, hc: hc}, nil
}

// loginTool is a tool that reads registry credentials from its private
// home; the in-process imgctl of the tests reads the test's DOCKER_CONFIG.
type loginTool interface {
	Login(host, user, password string) error
}

// Login adds credentials for host to the Docker config in the tool's
// private DOCKER_CONFIG, as `docker login` would: imgctl, crane and regctl
// all read it.
func (t cmdTool) Login(host, user, password string) error {
	cf, err := dockerconfig.Load(filepath.Join(t.home, ".docker"))
	if err != nil {
		return err
	}
	cf.AuthConfigs[host] = types.AuthConfig{Username: user, Password: password, ServerAddress: host}
	return cf.Save()
}

// prepareTools logs every tool in to the registry and configures it.
func (d *distEnv) prepareTools(ctx context.Context, tools []tool) error {
	for _, t := range tools {
		// Credentials first: regctl's Configure pings the registry.
		if lt, ok := t.(loginTool); ok {
			if err := lt.Login(d.reg.Host(), d.dist.User(), d.dist.Password()); err != nil {
				return fmt.Errorf("logging %s in: %w", t.Name(), err)
			}
		}
		if err := t.Configure(ctx, d.reg.Host()); err != nil {
			return fmt.Errorf("configuring %s: %w", t.Name(), err)
		}
	}
	return nil
}

// distResults is what the distribution runs measured: each case under
// basic auth, and under token auth when asked.
type distResults struct {
	basic []caseResult
	token []tokenResult
	cases []distCase
}

// runDistCases runs cs on a fresh distribution registry with basic auth,
// every tool runs times as on regtest, and with token, again on a second
// one behind the token handshake.
func runDistCases(ctx context.Context, cs []distCase, tools []tool, runs int, token bool, log io.Writer) (*distResults, error) {
	res := &distResults{cases: cs}
	err := withDistEnv(ctx, false, tools, func(d *distEnv) error {
		for _, c := range cs {
			fmt.Fprintf(log, "case %s (distribution): pushing sources\n", c.Name())
			if err := c.Setup(ctx, d.env); err != nil {
				return fmt.Errorf("setting up %s on distribution: %w", c.Name(), err)
			}
			res.basic = append(res.basic, runCase(ctx, d.env, c, tools, runs, log))
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || !token {
		return res, err
	}
	// Fresh cases: Setup records the sources of one registry.
	var tcs []benchCase
	for _, c := range filter(distCases(), caseNames(cs), distCase.Name) {
		tcs = append(tcs, c)
	}
	err = withDistEnv(ctx, true, tools, func(d *distEnv) (err error) {
		res.token, err = runHandshakes(ctx, d.env, d.hc, d.dist.TokenRequests, tcs, tools, runs, log)
		return err
	})
	return res, err
}

// startPreparedDistEnv starts a distribution registry (startDistEnv) and
// logs the tools in (prepareTools); the caller closes it.
func startPreparedDistEnv(ctx context.Context, token bool, tools []tool) (*distEnv, error) {
	d, err := startDistEnv(token)
	if err != nil {
		return nil, err
	}
	if err := d.prepareTools(ctx, tools); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// withDistEnv starts a distribution registry with the tools logged in
// (startPreparedDistEnv), runs fn and closes the registry.
func withDistEnv(ctx context.Context, token bool, tools []tool, fn func(*distEnv) error) error {
	d, err := startPreparedDistEnv(ctx, token, tools)
	if err != nil {
		return err
	}
	defer d.Close()
	return fn(d)
}

// caseNames joins the names of cs with commas, as -cases takes them.
func caseNames(cs []distCase) string {
	var ns []string
	for _, c := range cs {
		ns = append(ns, c.Name())
	}
	return strings.Join(ns, ",")
}
