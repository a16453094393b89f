package cli

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// pingCounter counts GET /v2/, the first half of a registry handshake.
type pingCounter struct{ n atomic.Int64 }

func (p *pingCounter) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/v2/" {
			p.n.Add(1)
		}
		next.ServeHTTP(w, r)
	})
}

// TestOneHandshakePerCommand: on a registry with token auth, every verb
// pings the registry once and asks for one token, whatever it reads and
// writes there (the sources, the bases, the target, signatures), because
// one registry client serves the whole command with its scopes declared up
// front. Across two registries, promote does one handshake on each.
func TestOneHandshakePerCommand(t *testing.T) {
	sv, pub := sigKey(t)
	for _, tc := range []struct {
		name string
		args func(reg, other *regtest.Registry, app, signed string) []string
		// handshakes on the second registry (promote across registries)
		other bool
	}{
		{"verify", func(_, _ *regtest.Registry, app, _ string) []string { return []string{"verify", app} }, false},
		{"resolve", func(_, _ *regtest.Registry, app, _ string) []string {
			return []string{"resolve", app, "--platform", "windows/amd64:10.0.26100.2894"}
		}, false},
		{"inspect", func(_, _ *regtest.Registry, app, _ string) []string { return []string{"inspect", app} }, false},
		{"index create", func(reg, _ *regtest.Registry, app, _ string) []string {
			return []string{"index", "create", "-t", reg.Host() + "/merged/app:1", app}
		}, false},
		{"index remove", func(reg, _ *regtest.Registry, app, _ string) []string {
			return []string{"index", "remove", "-t", reg.Host() + "/smaller/app:1", "--platform", "linux/arm64", app}
		}, false},
		{"bases", func(_, _ *regtest.Registry, app, _ string) []string { return []string{"bases", app} }, false},
		{"rebase", func(reg, _ *regtest.Registry, app, _ string) []string {
			return []string{"rebase", app, "-t", reg.Host() + "/app:2"}
		}, false},
		{"verify --key", func(_, _ *regtest.Registry, _, signed string) []string {
			return []string{"verify", signed, "--key", pub}
		}, false},
		{"promote", func(reg, _ *regtest.Registry, _, signed string) []string {
			return []string{"promote", signed, reg.Host() + "/release/app:1", "--key", pub}
		}, false},
		{"promote across registries", func(_, other *regtest.Registry, _, signed string) []string {
			return []string{"promote", signed, other.Host() + "/release/app:1", "--key", pub}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, other := regtest.New(t), regtest.New(t)
			app := rebaseFixture(t, reg)
			moveBases(t, reg, winFeb)
			signed, _ := sigPush(t, reg, "ci/app:1", regtest.Must(regtest.MultiOSIndex())(t), sv)
			auth := []*regtest.BearerAuth{{Token: "t1", Service: "one"}, {Token: "t2", Service: "two"}}
			pings := []*pingCounter{{}, {}}
			for i, r := range []*regtest.Registry{reg, other} {
				a, p := auth[i], pings[i]
				r.SetMiddleware(func(next http.Handler) http.Handler { return p.middleware(a.Middleware(next)) })
			}
			out, errOut, code := run(t, tc.args(reg, other, app, signed)...)
			if code > 1 {
				t.Fatalf("exit %d\n%s%s", code, out, errOut)
			}
			want := [2]int64{1, 0}
			if tc.other {
				want = [2]int64{1, 1}
			}
			for i := range 2 {
				if p, n := pings[i].n.Load(), auth[i].TokenRequests(); p != want[i] || n != want[i] {
					t.Errorf("registry %d: %d pings and %d token requests, want %d of each", i+1, p, n, want[i])
				}
			}
		})
	}
}
